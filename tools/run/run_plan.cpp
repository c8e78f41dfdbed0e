// SPDX-License-Identifier: Apache-2.0
#include "run/run_plan.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>

#include "core/contract/contract.hpp"
#include "core/slurm/hostlist.hpp"

namespace sddp::run {
namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

std::string plural(std::size_t n, const char* word) {
    return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

}  // namespace

Result<std::vector<std::string>> choose_run_nodes(const NodePool& pool, const RunRequest& req) {
    std::vector<std::string> usable;
    for (const auto& node : pool.allocation) {
        if (contains(pool.excluded, node) || contains(pool.failed, node)) continue;
        if (contains(usable, node)) continue;
        usable.push_back(node);
    }
    if (usable.size() < req.nodes.min) {
        std::string why;
        if (!pool.failed.empty())
            why += " after leaving out " + compress_hostlist(pool.failed) + " (failed)";
        if (!pool.excluded.empty()) {
            why += std::string(why.empty() ? " after leaving out " : " and ") + req.excluded_text +
                   " (-x)";
        }
        return make_error(Errc::invalid_input,
                          "SLURM_JOB_NODELIST=" + pool.allocation_text + " leaves " +
                              plural(usable.size(), "usable node") + why + ", but the step needs " +
                              std::to_string(req.nodes.min) + " (-N" + req.nodes_text +
                              "): allocate spare nodes (e.g. sbatch -N" +
                              std::to_string(req.nodes.min + 1) + " for -N" +
                              std::to_string(req.nodes.min) +
                              " and one restart) or let the step shrink (-N MIN-MAX)");
    }
    usable.resize(std::min<std::size_t>(usable.size(), req.nodes.max));
    return usable;
}

Result<std::uint32_t> first_restart_count(const std::optional<std::string>& slurm_restart_count) {
    if (!slurm_restart_count || slurm_restart_count->empty()) return 0u;
    const std::string& s = *slurm_restart_count;
    std::uint32_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size()) {
        return make_error(Errc::invalid_input,
                          "SLURM_RESTART_COUNT='" + s +
                              "' is not a count; Slurm sets it to the runs of a requeued job "
                              "before this one: unset it");
    }
    return v;
}

std::string summary_line(const RunRecord& r, std::string_view next) {
    std::string line = "slurm-ddp run: run " + std::to_string(r.number) + " of " +
                       std::to_string(r.max_runs) + " on " + compress_hostlist(r.nodes) + " (" +
                       contract::kRestartsVar + "=" + std::to_string(r.restart_count) + "): ";
    if (r.srun_status == 0) {
        line += "succeeded";
    } else if (r.failure) {
        const StepFailure& f = *r.failure;
        line += "failed, ";
        if (f.rank) line += "rank " + std::to_string(*f.rank) + " on ";
        line += (f.rank ? "" : "node ") + f.node + ": " + describe_reason(f);
    } else {
        line += "failed with srun exit status " + std::to_string(r.srun_status) +
                ", no failed rank named on srun's stderr";
    }
    if (!next.empty()) line += "; " + std::string(next);
    return line;
}

int run_exit_status(const RunRecord& r) {
    if (r.srun_status == 0) return 0;
    if (r.failure) {
        if (auto s = failure_exit_status(*r.failure)) return *s;
    }
    return r.srun_status;
}

}  // namespace sddp::run

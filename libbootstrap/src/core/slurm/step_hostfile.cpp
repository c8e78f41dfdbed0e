// SPDX-License-Identifier: Apache-2.0
#include "core/slurm/step_hostfile.hpp"

#include <algorithm>
#include <cstdint>

#include "core/task/rank_order.hpp"

namespace sddp {
namespace {

// The index of rank 0's node: from the rank layout where Slurm's variables give it, else the
// node MASTER_ADDR names (arbitrary distributions: the host file's first host), else the first.
std::size_t rank0_node(const StepFacts& f, const LaunchEnv& launch, const DdpOptions& opts) {
    if (auto layout = ordered_ranks_per_node(f, opts.rank_order.value_or(RankOrder::block))) {
        for (std::size_t n = 0; n < layout->size(); ++n) {
            const auto& ranks = (*layout)[n];
            if (std::find(ranks.begin(), ranks.end(), 0u) != ranks.end()) return n;
        }
    }
    std::string host = launch.master_addr;
    const std::string suffix = opts.addr_suffix.value_or("");
    if (!suffix.empty() && host.size() > suffix.size() && host.ends_with(suffix))
        host.resize(host.size() - suffix.size());
    const auto it = std::find(f.nodes.begin(), f.nodes.end(), host);
    return it == f.nodes.end() ? 0 : static_cast<std::size_t>(it - f.nodes.begin());
}

}  // namespace

std::string step_hostfile_path(std::uint32_t uid, std::uint32_t job_id, std::uint32_t step_id,
                               std::uint32_t nodeid) {
    return "/tmp/slurm-ddp-hostfile." + std::to_string(uid) + "." + std::to_string(job_id) + "." +
           std::to_string(step_id) + "." + std::to_string(nodeid);
}

Result<StepHostfile> step_hostfile(const StepFacts& f, const LaunchEnv& launch,
                                   const DdpOptions& opts, std::uint32_t uid,
                                   std::optional<std::uint32_t> launcher_slots) {
    if (f.nodes.empty() || f.nodes.size() != f.tasks_per_node.size()) {
        return make_error(Errc::internal, "--ddp=hostfile: the step's node list is not known");
    }
    const std::size_t first = rank0_node(f, launch, opts);
    StepHostfile out;
    out.path = step_hostfile_path(uid, f.job_id, f.step_id, f.nodeid);
    auto line = [&](std::size_t n) {
        const std::uint32_t slots = launcher_slots ? *launcher_slots : f.tasks_per_node[n];
        out.text += f.nodes[n] + " slots=" + std::to_string(slots) + "\n";
    };
    line(first);
    for (std::size_t n = 0; n < f.nodes.size(); ++n) {
        if (n != first) line(n);
    }
    return out;
}

}  // namespace sddp

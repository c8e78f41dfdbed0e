// SPDX-License-Identifier: Apache-2.0
#include "core/slurm/hostfile.hpp"

#include <cstdint>
#include <map>

#include "core/base/numbers.hpp"
#include "core/slurm/hostlist.hpp"

namespace sddp {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

std::string ignored_hint(std::string_view path) {
    return "; SLURM_HOSTFILE=" + quote_value(path) +
           " does not describe this step (Slurm ignores the file when -w or --nodefile is given, "
           "and reads it on srun's host only): fix the file, or give --ddp=addr=HOST naming "
           "rank 0's host";
}

}  // namespace

Result<std::vector<HostRun>> parse_hostfile(std::string_view text, std::uint32_t max_ranks) {
    std::vector<HostRun> runs;
    std::uint64_t total = 0;
    std::size_t line_no = 0;
    while (!text.empty() && total < max_ranks) {
        ++line_no;
        const auto nl = text.find('\n');
        auto line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        if (const auto hash = line.find('#'); hash != std::string_view::npos)
            line = line.substr(0, hash);
        line = trim(line);
        if (line.empty()) continue;
        const auto where = [&] {
            return "line " + std::to_string(line_no) + " " + quote_value(line);
        };
        const std::uint64_t room = max_ranks - total;
        if (const auto star = line.rfind('*'); star != std::string_view::npos) {
            const auto count = parse_decimal(trim(line.substr(star + 1)), max_ranks);
            auto hosts = expand_hostlist(trim(line.substr(0, star)), 1);
            if (!count || *count == 0 || !hosts) {
                return make_error(Errc::invalid_input,
                                  "host file " + where() +
                                      " is not HOST*COUNT (one host, a count from 1 to " +
                                      std::to_string(max_ranks) + ")");
            }
            const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(*count, room));
            runs.push_back({std::move(hosts->front()), n});
            total += n;
            continue;
        }
        // Expanded only as far as the ranks still to place: memory stays bounded by the step.
        auto hosts = expand_hostlist(
            line, static_cast<std::size_t>(std::min<std::uint64_t>(room, kMaxHostlistHosts)));
        if (!hosts)
            return make_error(hosts.error().code,
                              "host file " + where() + ": " + hosts.error().message);
        for (auto& h : *hosts) {
            if (total == max_ranks) break;
            if (!runs.empty() && runs.back().host == h) {
                ++runs.back().count;
            } else {
                runs.push_back({std::move(h), 1});
            }
            ++total;
        }
    }
    return runs;
}

Result<std::string> hostfile_rank0_host(const StepFacts& f, const std::vector<HostRun>& runs,
                                        std::string_view path) {
    std::uint64_t total = 0;
    std::map<std::string_view, std::uint64_t> per_host;
    std::string_view own_host;
    for (const auto& r : runs) {
        if (f.procid >= total && f.procid < total + r.count) own_host = r.host;
        total += r.count;
        per_host[r.host] += r.count;
    }
    if (total < f.ntasks || runs.empty()) {
        return make_error(Errc::invalid_input, "the host file places " + std::to_string(total) +
                                                   " rank(s) but the step has " +
                                                   std::to_string(f.ntasks) + ignored_hint(path));
    }
    if (!f.node_name.empty() && own_host != f.node_name) {
        return make_error(Errc::invalid_input, "the host file puts rank " +
                                                   std::to_string(f.procid) + " on " +
                                                   quote_value(own_host) + " but it runs on " +
                                                   quote_value(f.node_name) + ignored_hint(path));
    }
    for (std::size_t i = 0; i < f.nodes.size(); ++i) {
        const auto it = per_host.find(f.nodes[i]);
        const std::uint64_t n = it == per_host.end() ? 0 : it->second;
        if (n != f.tasks_per_node[i]) {
            return make_error(Errc::invalid_input, "the host file puts " + std::to_string(n) +
                                                       " rank(s) on " + quote_value(f.nodes[i]) +
                                                       " but Slurm started " +
                                                       std::to_string(f.tasks_per_node[i]) +
                                                       " there" + ignored_hint(path));
        }
    }
    return runs.front().host;
}

}  // namespace sddp

// SPDX-License-Identifier: Apache-2.0
#include "core/check/check_verdict.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <utility>

#include "core/base/numbers.hpp"

namespace sddp {
namespace {

std::string node(const CheckRecord& r) {
    return "node " + r.host;
}
std::string who(const CheckRecord& r) {
    return "rank " + std::to_string(r.rank) + " on " + r.host;
}

// `master_is_remote`: this record's node is not rank 0's, so MASTER_ADDR must not be loopback.
std::vector<CheckProblem> problems_of(const CheckRecord& r, bool multi_node,
                                      bool master_is_remote) {
    std::vector<CheckProblem> out;
    auto add = [&](std::string where, std::string seen, std::string fix) {
        out.push_back({std::move(where), std::move(seen), std::move(fix), {r.rank}});
    };
    const std::string name = quote_value(r.host);
    if (multi_node && !r.host_error.empty()) {
        add(node(r), "its own name " + name + " does not resolve (" + r.host_error + ")",
            "add " + name + " with its network address to /etc/hosts or DNS on " + r.host +
                " (gloo and NCCL look it up)");
    } else if (multi_node && is_loopback_address(r.host_address)) {
        add(node(r),
            "its own name " + name + " resolves to " + r.host_address +
                " (loopback), so gloo advertises an address no other node can reach and "
                "init_process_group hangs",
            "in " + r.host + "'s /etc/hosts map " + name +
                " to its network address (drop the 127.0.1.1 line), or set GLOO_SOCKET_IFNAME "
                "to the interface between the nodes");
    }
    const std::string master = "MASTER_ADDR " + quote_value(r.master_addr);
    if (!r.master_error.empty()) {
        add(node(r), master + " does not resolve (" + r.master_error + ")",
            "ranks here cannot reach rank 0: add it to /etc/hosts or DNS on " + r.host +
                ", or use a name or address every node knows (--ddp=addr=HOST or "
                "--ddp=addr-suffix=SUFFIX)");
    } else if (master_is_remote && is_loopback_address(r.master_address)) {
        add(node(r),
            master + " resolves to " + r.master_address +
                " (loopback) here, but rank 0 runs on another node",
            "ranks here would connect to themselves: fix the name in " + r.host +
                "'s /etc/hosts or give rank 0's network address with --ddp=addr=ADDRESS");
    } else if (!r.interface_error.empty()) {
        add(node(r), "no route to " + master + " (" + r.master_address + "): " + r.interface_error,
            "check the routes and firewall between " + r.host + " and rank 0's node");
    }
    if (!r.port_error.empty()) {
        const std::string port = std::to_string(r.master_port);
        add(who(r), "MASTER_PORT " + port + " cannot be listened on: " + r.port_error,
            "another process holds it (see `ss -ltnp 'sport = :" + port + "'` on " + r.host +
                "): stop it, or pick a free port with --ddp=port=N");
    }
    if (!r.gpu_error.empty()) {
        add(who(r), r.gpu_error,
            "check the job's GPU request (--gres=gpu:N, --gpus-per-task=1) and the device "
            "permissions on " +
                r.host);
    }
    return out;
}

// Node-wide problems come once per node, naming every rank there that saw them.
void add_merged(std::vector<CheckProblem>& all, CheckProblem p) {
    for (auto& q : all) {
        if (q.where == p.where && q.seen == p.seen && q.fix == p.fix) {
            q.ranks.insert(q.ranks.end(), p.ranks.begin(), p.ranks.end());
            return;
        }
    }
    all.push_back(std::move(p));
}

}  // namespace

bool is_loopback_address(const std::string& a) {
    return a.rfind("127.", 0) == 0 || a == "::1" || a.rfind("::ffff:127.", 0) == 0;
}

Result<std::string> judge_master_address(const std::string& master_addr,
                                         const std::vector<std::string>& addresses,
                                         const std::string& resolve_error,
                                         const std::string& host) {
    const std::string name = "MASTER_ADDR " + quote_value(master_addr);
    if (addresses.empty()) {
        return make_error(Errc::invalid_input,
                          name + " does not resolve on host " + quote_value(host) + " (" +
                              (resolve_error.empty() ? "no address" : resolve_error) +
                              "), and rank 0 runs on another node: add it to /etc/hosts or DNS "
                              "there, or use a name or address every node knows (--ddp=addr=HOST "
                              "or --ddp=addr-suffix=SUFFIX); `srun --ddp slurm-ddp check` checks "
                              "every node");
    }
    for (const auto& a : addresses) {
        if (!is_loopback_address(a)) return std::string();
    }
    return name + " resolves to " + addresses.front() + " (loopback) on host " + quote_value(host) +
           ", but rank 0 runs on another node: unless the nodes share this host's network, this "
           "rank connects to itself and waits out the timeout. Fix the name in this node's "
           "/etc/hosts or give rank 0's network address with --ddp=addr=ADDRESS; `srun --ddp "
           "slurm-ddp check` checks every node";
}

std::vector<CheckProblem> local_problems(const CheckRecord& r, bool multi_node) {
    return problems_of(r, multi_node, multi_node && r.node_rank > 0);
}

std::vector<CheckProblem> judge_step(const std::vector<CheckRecord>& all) {
    std::vector<CheckProblem> out;
    if (all.empty()) return out;
    const CheckRecord& zero = all.front();
    // Loopback reaches rank 0 from every "node" that shares its network stack; only ranks on
    // another stack (a real other node) must not see MASTER_ADDR or their own name on loopback.
    std::set<std::string> networks;
    for (const auto& r : all) networks.insert(r.network.empty() ? "host " + r.host : r.network);
    const bool multi_node = networks.size() > 1;
    auto remote = [&](const CheckRecord& r) {
        return r.host != zero.host && (r.network.empty() || r.network != zero.network);
    };

    for (const auto& r : all) {
        for (auto& p : problems_of(r, multi_node, remote(r))) add_merged(out, p);
    }
    // MASTER_ADDR must name one machine everywhere. Loopback answers are reported above.
    for (const auto& r : all) {
        if (r.host == zero.host || r.master_address.empty() || zero.master_address.empty() ||
            is_loopback_address(r.master_address) || is_loopback_address(zero.master_address) ||
            r.master_address == zero.master_address) {
            continue;
        }
        add_merged(
            out, {node(r),
                  "MASTER_ADDR " + quote_value(r.master_addr) + " resolves to " + r.master_address +
                      " here but to " + zero.master_address + " on rank 0's node " + zero.host,
                  "the nodes' /etc/hosts or DNS disagree (NodeHostname/NodeAddr differ "
                  "from NodeName?): make the name resolve to one address everywhere, or "
                  "use --ddp=addr=ADDRESS",
                  {r.rank}});
    }
    // Same host and same device = one GPU for two ranks: NCCL's "Duplicate GPU detected".
    std::map<std::pair<std::string, std::string>, const CheckRecord*> owner;
    for (const auto& r : all) {
        if (r.gpu_key.empty()) continue;
        auto [it, inserted] = owner.emplace(std::make_pair(r.host, r.gpu_key), &r);
        if (inserted) continue;
        const CheckRecord& first = *it->second;
        out.push_back({"ranks " + std::to_string(first.rank) + " and " + std::to_string(r.rank) +
                           " on " + r.host,
                       "both use GPU " + r.gpu + ", so NCCL fails with \"Duplicate GPU detected\"",
                       "give each task its own GPU: --ddp=gpu-bind=local (or --gpus-per-task=1), "
                       "or no more tasks per node than GPUs",
                       {first.rank, r.rank}});
    }
    for (const auto& r : all) {
        if (r.versions == zero.versions) continue;
        add_merged(out, {node(r),
                         "runs " + quote_value(r.versions) + " but rank 0's node runs " +
                             quote_value(zero.versions),
                         "install the same slurm-ddp and driver release on every node",
                         {r.rank}});
    }
    return out;
}

std::vector<std::uint32_t> missing_ranks_in(const std::string& message) {
    static constexpr std::string_view kTag = "missing ranks ";
    std::vector<std::uint32_t> out;
    const auto at = message.find(kTag);
    if (at == std::string::npos) return out;
    std::size_t i = at + kTag.size();
    // "1,3-5": numbers and ranges, up to the first other character. Capped: a message about a
    // huge step lists ranges, and the report names nodes, not every rank.
    while (i < message.size() && out.size() < 100000) {
        std::size_t j = i;
        while (j < message.size() && message[j] >= '0' && message[j] <= '9') ++j;
        if (j == i) break;
        auto lo = parse_decimal(std::string_view(message).substr(i, j - i), 0xffffffffu);
        if (!lo) break;
        std::uint64_t hi = *lo;
        if (j < message.size() && message[j] == '-') {
            std::size_t k = j + 1;
            while (k < message.size() && message[k] >= '0' && message[k] <= '9') ++k;
            auto h = parse_decimal(std::string_view(message).substr(j + 1, k - j - 1), 0xffffffffu);
            if (!h || *h < *lo) break;
            hi = *h;
            j = k;
        }
        for (std::uint64_t r = *lo; r <= hi && out.size() < 100000; ++r) {
            out.push_back(static_cast<std::uint32_t>(r));
        }
        if (j >= message.size() || message[j] != ',') break;
        i = j + 1;
    }
    return out;
}

std::vector<CheckProblem> missing_node_problems(
    const std::vector<std::uint32_t>& missing, const std::vector<std::string>& nodes,
    const std::vector<std::vector<std::uint32_t>>& ranks_per_node, const std::string& rank0_host,
    std::uint32_t timeout_s) {
    std::vector<CheckProblem> out;
    const std::set<std::uint32_t> gone(missing.begin(), missing.end());
    for (std::size_t n = 0; n < nodes.size() && n < ranks_per_node.size(); ++n) {
        CheckProblem p;
        for (auto r : ranks_per_node[n])
            if (gone.count(r)) p.ranks.push_back(r);
        if (p.ranks.empty()) continue;
        std::string list;
        for (std::size_t i = 0; i < p.ranks.size() && i < 8; ++i) {
            list += (i ? "," : "") + std::to_string(p.ranks[i]);
        }
        if (p.ranks.size() > 8) list += ",...";
        p.where = "node " + nodes[n];
        p.seen = std::string(p.ranks.size() == 1 ? "rank " : "ranks ") + list +
                 " did not join the rendezvous within " + std::to_string(timeout_s) + " s";
        p.fix = "the node is down, cut off from " + rank0_host +
                " (routes, firewall), or its task failed first (its own lines say why); see "
                "`scontrol show node " +
                nodes[n] + "`, or leave it out with --exclude=" + nodes[n];
        out.push_back(std::move(p));
    }
    return out;
}

}  // namespace sddp

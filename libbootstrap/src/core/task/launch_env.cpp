// SPDX-License-Identifier: Apache-2.0
#include "core/task/launch_env.hpp"

#include <algorithm>
#include <cstdint>

#include "core/base/numbers.hpp"
#include "core/contract/contract.hpp"
#include "core/slurm/hostfile.hpp"
#include "core/slurm/hostlist.hpp"
#include "core/slurm/node_order.hpp"
#include "core/task/cluster_spec_env.hpp"
#include "core/task/port_block.hpp"
#include "core/task/rank_order.hpp"

namespace sddp {
namespace {

std::string_view node_distribution(std::string_view dist) {
    // "block:cyclic,Pack": the part before ':' or ',' is how tasks spread over nodes.
    return dist.substr(0, dist.find_first_of(":,"));
}

Result<std::string> master_host(const StepFacts& f, const StepOptions& opts,
                                const LaunchContext& ctx, AddrSource& source) {
    if (opts.addr) {
        source = AddrSource::option;
        return *opts.addr;
    }
    std::string host;
    // Under rank-order=node, rank 0 is the first task of the first node, whatever the host file.
    const bool node_order = opts.rank_order == RankOrder::node;
    if (!node_order && node_distribution(f.distribution) == "arbitrary") {
        const std::string intro =
            "MASTER_ADDR cannot be known under --distribution=arbitrary: the host of rank 0 is "
            "in SLURM_HOSTFILE";
        if (!ctx.hostfile_text) {
            return make_error(
                Errc::missing_input,
                intro + (f.hostfile
                             ? "=" + quote_value(*f.hostfile) + ", which " +
                                   (ctx.hostfile_problem.empty() ? std::string("is not readable")
                                                                 : ctx.hostfile_problem) +
                                   " on node " + quote_value(f.node_name) +
                                   "; put the host file on a shared file system or give "
                                   "--ddp=addr=HOST"
                             : std::string(", which is not set (with -w or --nodefile the "
                                           "order is not exported to tasks); give "
                                           "--ddp=addr=HOST naming rank 0's host")));
        }
        auto runs = parse_hostfile(*ctx.hostfile_text, f.ntasks);
        if (!runs) {
            return make_error(runs.error().code,
                              "SLURM_HOSTFILE=" + quote_value(f.hostfile.value_or("")) + ": " +
                                  runs.error().message);
        }
        SDDP_TRY(first, hostfile_rank0_host(f, *runs, f.hostfile.value_or("")));
        host = first;
        source = AddrSource::hostfile;
    } else {
        SDDP_TRY(order, nodes_by_nodeid(f));
        host = order.front();
        source =
            f.het_component_nodelists.empty() ? AddrSource::nodelist : AddrSource::het_components;
    }
    host += opts.addr_suffix;
    return host;
}

// An exported MASTER_ADDR is passed on to programs and scripts (torchrun, `ssh $MASTER_ADDR`):
// only what a host name or an address holds, never shell syntax or control characters.
bool host_or_address(std::string_view text) {
    return text.size() <= 253 && std::all_of(text.begin(), text.end(), [](char c) {
               return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '.' || c == '_' || c == ':' || c == '%';
           });
}

}  // namespace

const char* to_string(AddrSource source) {
    switch (source) {
        case AddrSource::nodelist:
            return "nodelist";
        case AddrSource::het_components:
            return "het components";
        case AddrSource::hostfile:
            return "hostfile";
        case AddrSource::option:
            return "option";
        case AddrSource::user:
            return "user";
    }
    return "?";
}

const std::vector<std::string>& launch_variable_names() {
    static const std::vector<std::string> kNames{"MASTER_ADDR",
                                                 "MASTER_PORT",
                                                 "RANK",
                                                 "LOCAL_RANK",
                                                 "WORLD_SIZE",
                                                 "LOCAL_WORLD_SIZE",
                                                 "NODE_RANK",
                                                 "GROUP_RANK",
                                                 "GROUP_WORLD_SIZE",
                                                 "NNODES",
                                                 "ROLE_RANK",
                                                 "ROLE_WORLD_SIZE",
                                                 "ROLE_NAME",
                                                 contract::kStepVar,
                                                 contract::kTimeoutVar,
                                                 contract::kSecretVar,
                                                 contract::kPortsVar};
    return kNames;
}

Result<LaunchEnv> derive_launch_env(const StepFacts& f, const StepOptions& opts,
                                    const LaunchContext& ctx) {
    LaunchEnv e;
    e.rank = ordered_rank(f, opts.rank_order);
    e.world_size = f.ntasks;
    e.local_rank = f.localid;
    e.local_world_size = f.tasks_per_node.at(f.node_index);
    e.node_rank = f.nodeid;
    e.nnodes = f.nnodes;
    e.step_tag = std::to_string(f.job_id) + "." + std::to_string(f.step_id);

    const bool override_env = opts.override_env;
    if (ctx.user_master_addr && !ctx.user_master_addr->empty() && !override_env) {
        if (!host_or_address(*ctx.user_master_addr)) {
            return make_error(Errc::invalid_input,
                              "MASTER_ADDR=" + quote_value(*ctx.user_master_addr) +
                                  " (exported by you) is not a host name or address (letters, "
                                  "digits, '-', '.', '_', ':', '%', at most 253); unset it, fix "
                                  "it, or use --ddp=override to let --ddp choose");
        }
        e.master_addr = *ctx.user_master_addr;
        e.addr_source = AddrSource::user;
    } else {
        SDDP_TRY(host, master_host(f, opts, ctx, e.addr_source));
        e.master_addr = host;
        // Rank 0 can check the claim that it runs on the master host; a mismatch means the
        // layout is not what Slurm's variables say, and every other rank would wait in vain.
        if (e.rank == 0 && e.addr_source != AddrSource::option && !f.node_name.empty()) {
            const std::string expected = f.node_name + opts.addr_suffix;
            if (expected != e.master_addr) {
                return make_error(Errc::invalid_input,
                                  "rank 0 runs on node " + quote_value(f.node_name) +
                                      " but MASTER_ADDR would be " + quote_value(e.master_addr) +
                                      " (from the " + to_string(e.addr_source) +
                                      ", SLURM_DISTRIBUTION=" + quote_value(f.distribution) +
                                      "); give --ddp=addr=HOST to name rank 0's host");
            }
        }
    }

    PortBlockInput ports;
    ports.job_id = f.job_id;
    ports.step_id = f.step_id;
    if (f.resv_ports) ports.resv_ports = *f.resv_ports;
    if (ctx.user_master_port && !ctx.user_master_port->empty() && !override_env) {
        const auto p = parse_decimal(*ctx.user_master_port, 65535);
        if (!p || *p == 0) {
            return make_error(Errc::invalid_input,
                              "MASTER_PORT=" + quote_value(*ctx.user_master_port) +
                                  " (exported by you) is not a port number; unset it, fix it, or "
                                  "use --ddp=override to let --ddp choose");
        }
        ports.user_port = static_cast<std::uint16_t>(*p);
    }
    if (opts.tf) {
        ports.min_size = tf_ports_needed(f);
        ports.min_size_for = "--ddp=tf";
    }
    SDDP_TRY(block, choose_port_block(ports, opts));
    e.master_port = block.first;
    e.ports_last = block.last;
    e.port_source = block.source;

    auto set = [&](std::string name, std::string value, bool keep = false) {
        e.vars.push_back(EnvAssignment{std::move(name), std::move(value), keep});
    };
    set("MASTER_ADDR", e.master_addr, !override_env);
    set("MASTER_PORT", std::to_string(e.master_port), !override_env);
    set("RANK", std::to_string(e.rank));
    set("LOCAL_RANK", std::to_string(e.local_rank));
    set("WORLD_SIZE", std::to_string(e.world_size));
    set("LOCAL_WORLD_SIZE", std::to_string(e.local_world_size));
    set("NODE_RANK", std::to_string(e.node_rank));
    set("GROUP_RANK", std::to_string(e.node_rank));
    set("GROUP_WORLD_SIZE", std::to_string(e.nnodes));
    set("NNODES", std::to_string(e.nnodes));
    set("ROLE_RANK", std::to_string(e.rank));
    set("ROLE_WORLD_SIZE", std::to_string(e.world_size));
    set("ROLE_NAME", "default");
    set(contract::kStepVar, e.step_tag);
    set(contract::kPortsVar, std::to_string(e.master_port) + "-" + std::to_string(e.ports_last));
    if (opts.timeout_s) set(contract::kTimeoutVar, std::to_string(*opts.timeout_s));
    return e;
}

Result<std::vector<std::vector<std::uint32_t>>> ranks_per_node(const StepFacts& f) {
    std::vector<std::vector<std::uint32_t>> out(f.nnodes);
    const auto dist = node_distribution(f.distribution);
    if (dist == "arbitrary") {
        return make_error(Errc::unsupported,
                          "the rank layout of an arbitrary distribution is only in SLURM_HOSTFILE");
    }
    if (!f.het_component_nodelists.empty() && f.nodes.size() > 1) {
        return make_error(Errc::unsupported,
                          "Slurm does not export how a heterogeneous step spreads its ranks");
    }
    std::uint32_t plane = 1;
    if (dist == "plane") {
        // Slurm exports -m plane=N as SLURM_DISTRIBUTION=plane plus SLURM_DIST_PLANESIZE=N.
        if (f.plane_size == 0) {
            return make_error(Errc::invalid_input,
                              "SLURM_DISTRIBUTION=plane without SLURM_DIST_PLANESIZE");
        }
        plane = f.plane_size;
    } else if (dist.substr(0, 6) == "plane=") {
        const auto p = parse_decimal(dist.substr(6), 1u << 20);
        if (!p || *p == 0)
            return make_error(Errc::invalid_input,
                              "SLURM_DISTRIBUTION=" + quote_value(f.distribution));
        plane = static_cast<std::uint32_t>(*p);
    }
    std::uint32_t rank = 0;
    if (dist == "cyclic" || plane > 1) {
        // Round robin over nodes that still have room, `plane` tasks at a time.
        while (rank < f.ntasks) {
            bool placed = false;
            for (std::uint32_t n = 0; n < f.nnodes && rank < f.ntasks; ++n) {
                for (std::uint32_t k = 0;
                     k < plane && out[n].size() < f.tasks_per_node[n] && rank < f.ntasks; ++k) {
                    out[n].push_back(rank++);
                    placed = true;
                }
            }
            if (!placed) break;
        }
    } else {
        for (std::uint32_t n = 0; n < f.nnodes; ++n) {
            for (std::uint32_t k = 0; k < f.tasks_per_node[n]; ++k) out[n].push_back(rank++);
        }
    }
    return out;
}

}  // namespace sddp

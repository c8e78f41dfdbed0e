// SPDX-License-Identifier: Apache-2.0
#include "check_command.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>

#include "check_facts.hpp"
#include "check_gpu.hpp"
#include "core/cluster_spec_env.hpp"
#include "core/contract.hpp"
#include "core/env_lookup.hpp"
#include "core/identity.hpp"
#include "core/launch_env.hpp"
#include "core/numbers.hpp"
#include "core/step_check.hpp"
#include "core/step_facts.hpp"
#include "nccl/nccl_layer.hpp"
#include "os/host_files.hpp"
#include "os/process_env.hpp"
#include "rendezvous/select_transport.hpp"
#include "slurm_ddp/bootstrap.h"

namespace sddp::check {
namespace {

struct CheckArgs {
    bool json = false;
    bool nccl = false;
    // --before-program (what --ddp=check runs): silent when healthy, and on failure each task
    // says on its own stderr why its program does not start.
    bool before_program = false;
    std::chrono::milliseconds timeout{5000};
};

int usage(const std::string& why) {
    std::cerr << "slurm-ddp: check: " << why << "\nusage: " << kCheckUsage;
    return 2;
}

// One line naming what --ddp=jax, tf and hostfile set in this task, so a user sees the framework
// variables beside the step's health (rank 0's view; every rank gets its own values).
std::string cluster_spec_line(const EnvLookup& env) {
    std::string items;
    auto add = [&](const std::string& item) { items += (items.empty() ? "" : ", ") + item; };
    for (const auto& name : cluster_spec_variable_names()) {
        auto v = env(name);
        if (!v) continue;
        add(name == "TF_CONFIG" ? name + " (" + std::to_string(v->size()) + " bytes)"
                                : name + "=" + *v);
    }
    if (auto path = env(contract::kHostfileVar)) {
        const bool readable = ::access(path->c_str(), R_OK) == 0;
        add(std::string(contract::kHostfileVar) + "=" + *path +
            (readable ? "" : " (NOT READABLE on this node)"));
    }
    return items.empty() ? "" : "framework variables: " + items + "\n";
}

void print(const std::string& text, bool to_stderr) {
    std::FILE* f = to_stderr ? stderr : stdout;
    (void)std::fwrite(text.data(), 1, text.size(), f);
    (void)std::fflush(f);
}

std::string problem_lines(const std::vector<CheckProblem>& ps) {
    std::string out;
    for (const auto& p : ps) out += "problem: " + p.line() + "\n";
    return out;
}

bool names(const CheckProblem& p, std::uint32_t rank) {
    for (auto r : p.ranks)
        if (r == rank) return true;
    return false;
}

// The exchange failed (a rank did not arrive, the port was taken, MASTER_ADDR did not resolve):
// no table is possible, so each task says what it saw itself, next to the library's error.
int report_exchange_failure(const CheckArgs& a, const EnvLookup& env, const CheckRecord& mine,
                            bool multi_node, const std::string& error) {
    auto ps = local_problems(mine, multi_node);
    // Rank 0 hears which ranks never came; the step's placement says on which nodes they run.
    if (mine.rank == 0) {
        const auto missing = missing_ranks_in(error);
        auto facts = read_step_facts(env);
        if (!missing.empty() && facts) {
            if (auto per_node = ranks_per_node(*facts)) {
                const auto secs = static_cast<std::uint32_t>(
                    std::chrono::duration_cast<std::chrono::seconds>(a.timeout).count());
                for (auto& p :
                     missing_node_problems(missing, facts->nodes, *per_node, mine.host, secs)) {
                    ps.push_back(std::move(p));
                }
            }
        }
    }
    std::string text = problem_lines(ps);
    text += "slurm-ddp check: FAILED: rank " + std::to_string(mine.rank) + " on " + mine.host +
            ": the rendezvous did not complete: " + error + "\n";
    print(text, true);
    return 1;
}

bool has_gpu(const EnvLookup& env) {
    const auto v = env("CUDA_VISIBLE_DEVICES");
    return v && !v->empty() && *v != "NoDevFiles";
}

}  // namespace

int run_check_command(const std::vector<std::string>& args) {
    CheckArgs a;
    for (const auto& arg : args) {
        if (arg == "--json") {
            a.json = true;
        } else if (arg == "--nccl") {
            a.nccl = true;
        } else if (arg == "--before-program") {
            a.before_program = true;
        } else if (arg.rfind("--timeout=", 0) == 0) {
            auto s = parse_decimal(arg.substr(10), 3600);
            if (!s || *s == 0)
                return usage("--timeout wants 1-3600 seconds, not " + arg.substr(10));
            a.timeout = std::chrono::seconds(*s);
        } else {
            return usage("unknown argument '" + arg + "'");
        }
    }
    const auto env = process_env();
    // The inputs sddp_init uses too, so that both derive the same MASTER_ADDR and port.
    auto id = detect_identity(env, gather_identity_inputs(env));
    if (!id) {
        print("slurm-ddp check: FAILED: cannot tell this task's rank: " + id.error().message + "\n",
              true);
        return 1;
    }
    // Facts get a slice of the budget, so a dead resolver still leaves time for the exchange.
    const auto fact_budget =
        std::min<std::chrono::milliseconds>(a.timeout / 4, std::chrono::seconds(2));
    auto choice = resolve_transport_choice(TransportChoice::automatic, env);
    const bool tcp =
        choice &&
        (*choice == TransportChoice::tcp ||
         (*choice == TransportChoice::automatic && auto_transport(env) == TransportChoice::tcp));
    if (!tcp) id->master_port.reset();  // PMI2 listens on nothing: no port to probe
    CheckRecord mine = gather_check_record(*id, env, sddp_version(), fact_budget);
    if (auto device = check_device(*id, env)) add_bus_id(*device, mine, fact_budget);
    GpuFacts gpu;
    gpu.uses_gpu = mine.gpu != "none";
    if (gpu.uses_gpu) probe_device_files("/dev", gpu);
    const bool multi_node = id->num_nodes.value_or(2) > 1;

    const bool nccl = a.nccl && sddp_have_nccl() && has_gpu(env);
    std::string nccl_note;
    if (a.nccl && !nccl) {
        nccl_note = sddp_have_nccl() ? "nccl: skipped (no GPU visible to this task)"
                                     : "nccl: skipped (this slurm-ddp was built without NCCL)";
    }

    sddp_options opts;
    sddp_options_init(&opts);
    opts.no_nccl = nccl ? 0 : 1;
    opts.timeout_ms = a.timeout.count();
    sddp_handle* h = nullptr;
    if (sddp_init(&opts, &h) != SDDP_OK) {
        return report_exchange_failure(a, env, mine, multi_node, sddp_last_error());
    }
    bool allreduce_inside_nccl = false;
    if (nccl) {
        // Half the budget: a rank whose all-reduce hangs must still reach the exchange below
        // before its peers' wait there (the full timeout) runs out, to say so.
        auto sum = nccl::check_allreduce(sddp_nccl_comm(h), sddp_cuda_device(h), sddp_rank(h),
                                         sddp_world_size(h), a.timeout / 2, &allreduce_inside_nccl);
        gpu.nccl = sum ? "ok" : "failed";
        gpu.nccl_detail =
            sum ? "sum " + std::to_string(sum->got) + " = " + std::to_string(sum->expected)
                : sum.error().message;
    }

    const auto world = static_cast<std::size_t>(sddp_world_size(h));
    std::vector<std::uint8_t> all(world * kCheckRecordBytes);
    const auto bytes = encode_check_record(mine);
    if (sddp_allgather(h, bytes.data(), bytes.size(), all.data()) != SDDP_OK) {
        const std::string error = sddp_last_error();
        (void)sddp_abort(h, "slurm-ddp check: exchange failed");
        return report_exchange_failure(a, env, mine, multi_node, error);
    }
    std::vector<std::uint8_t> all_gpu(world * kGpuFactsBytes);
    const auto gpu_bytes = encode_gpu_facts(gpu);
    if (sddp_allgather(h, gpu_bytes.data(), gpu_bytes.size(), all_gpu.data()) != SDDP_OK) {
        const std::string error = sddp_last_error();
        (void)sddp_abort(h, "slurm-ddp check: exchange failed");
        return report_exchange_failure(a, env, mine, multi_node, error);
    }
    std::vector<GpuFacts> gpus;
    bool nccl_failed = false;
    for (std::size_t i = 0; i < world; ++i) {
        gpus.push_back(decode_gpu_facts(
            std::span<const std::uint8_t>(all_gpu).subspan(i * kGpuFactsBytes, kGpuFactsBytes)));
        nccl_failed = nccl_failed || (!gpus.back().nccl.empty() && gpus.back().nccl != "ok");
    }
    // Every rank knows the same: after a failed all-reduce (perhaps still in flight) the
    // communicators are aborted on every rank rather than finalised.
    if (allreduce_inside_nccl) {
        // A thread is still inside ncclAllReduce on the world communicator: aborting or
        // finalising it now would free it under that thread. The handle is left to the
        // process's exit, which follows the report; every rank knows of the failure already.
        (void)sddp_barrier(h);
    } else if (nccl_failed) {
        // The abort reaches the other ranks over the rendezvous and could overtake the facts on
        // their way to them: nobody aborts before every rank holds them.
        (void)sddp_barrier(h);
        (void)sddp_abort(h, "slurm-ddp check: the NCCL all-reduce failed");
    } else {
        (void)sddp_finalize(h);
    }

    std::vector<CheckRecord> records;
    std::optional<std::string> decode_error;
    for (std::size_t i = 0; i < world; ++i) {
        auto r = decode_check_record(
            std::span<const std::uint8_t>(all).subspan(i * kCheckRecordBytes, kCheckRecordBytes));
        if (!r) {
            decode_error = "rank " + std::to_string(i) + ": " + r.error().message;
            break;
        }
        records.push_back(std::move(*r));
    }
    if (decode_error) return report_exchange_failure(a, env, mine, multi_node, *decode_error);

    auto problems = judge_step(records);
    for (auto& p : nccl_problems(records, gpus)) problems.push_back(std::move(p));
    std::string warnings;
    for (const auto& w : isolation_warnings(records, gpus)) warnings += "warning: " + w + "\n";
    if (a.before_program) {
        if (mine.rank == 0 && !warnings.empty()) print(warnings, true);
        if (problems.empty()) return 0;
        std::string text;
        for (const auto& p : problems) {
            if (mine.rank == 0 || names(p, mine.rank)) text += "problem: " + p.line() + "\n";
        }
        text += verdict_line(world, problems) + "\n";
        print(text, true);
        return 1;
    }
    if (mine.rank == 0) {
        if (a.json) {
            print(format_check_json(records, problems, std::nullopt), false);
        } else {
            print(format_check_report(records, problems) + warnings + nccl_lines(records, gpus) +
                      (nccl_note.empty() ? "" : nccl_note + "\n") + cluster_spec_line(env),
                  false);
        }
    }
    return problems.empty() ? 0 : 1;
}

}  // namespace sddp::check

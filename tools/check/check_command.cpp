// SPDX-License-Identifier: Apache-2.0
#include "check/check_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "check/check_facts.hpp"
#include "check/check_gpu.hpp"
#include "check/check_nccl_plan.hpp"
#include "core/base/env_lookup.hpp"
#include "core/base/numbers.hpp"
#include "core/check/check_record.hpp"
#include "core/check/check_report.hpp"
#include "core/check/check_verdict.hpp"
#include "core/contract/contract.hpp"
#include "core/options/option_params.hpp"
#include "core/slurm/step_facts.hpp"
#include "core/task/cluster_spec_env.hpp"
#include "core/task/identity.hpp"
#include "core/task/launch_env.hpp"
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
    std::chrono::milliseconds timeout{std::chrono::seconds(kCheckTimeoutSeconds)};
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
// `said`: this rank printed its own problems when it found them (run_check_command).
int report_exchange_failure(const CheckArgs& a, const EnvLookup& env, const CheckRecord& mine,
                            bool multi_node, bool said, const std::string& error) {
    auto ps = said ? std::vector<CheckProblem>{} : local_problems(mine, multi_node);
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

std::optional<int> parse_args(const std::vector<std::string>& args, CheckArgs& a) {
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
    return std::nullopt;
}

// Loading NCCL and the CUDA runtime starts the runtime, which waits on the driver: bounded like
// the other facts, on a thread given up after `budget`.
Result<nccl::LoadedLibraries> load_libraries(std::chrono::milliseconds budget) {
    struct Shared {
        std::mutex mu;
        std::condition_variable cv;
        std::optional<Result<nccl::LoadedLibraries>> got;
    };
    auto sh = std::make_shared<Shared>();
    std::thread([sh] {
        auto libs = nccl::loaded_libraries();
        std::lock_guard<std::mutex> lock(sh->mu);
        sh->got.emplace(std::move(libs));
        sh->cv.notify_all();
    }).detach();
    std::unique_lock<std::mutex> lock(sh->mu);
    if (!sh->cv.wait_for(lock, budget, [&] { return sh->got.has_value(); })) {
        return make_error(Errc::timeout, "loading NCCL and the CUDA runtime did not finish in " +
                                             std::to_string(budget.count()) +
                                             " ms (is the GPU driver answering? nvidia-smi)");
    }
    return *sh->got;
}

// What this task sees by itself, before any exchange.
struct LocalFacts {
    CheckRecord mine;
    GpuFacts gpu;
    bool multi_node = true;
    NcclPlan nccl;
};

Result<LocalFacts> gather_local(const CheckArgs& a, const EnvLookup& env) {
    // The inputs sddp_init uses too, so that both derive the same MASTER_ADDR and port.
    auto id = detect_identity(env, gather_identity_inputs(env));
    if (!id)
        return make_error(id.error().code, "cannot tell this task's rank: " + id.error().message);
    // Facts get a slice of the budget, so a dead resolver still leaves time for the exchange.
    const auto fact_budget =
        std::min<std::chrono::milliseconds>(a.timeout / 4, std::chrono::seconds(2));
    auto choice = resolve_transport_choice(TransportChoice::automatic, env);
    const bool tcp =
        choice &&
        (*choice == TransportChoice::tcp ||
         (*choice == TransportChoice::automatic && auto_transport(env) == TransportChoice::tcp));
    if (!tcp) id->master_port.reset();  // PMI2 listens on nothing: no port to probe
    LocalFacts f;
    f.mine = gather_check_record(*id, env, sddp_version(), fact_budget);
    if (auto device = check_device(*id, env)) add_bus_id(*device, f.mine, fact_budget);
    f.gpu.uses_gpu = f.mine.gpu != "none";
    if (f.gpu.uses_gpu) probe_device_files("/dev", f.gpu);
    f.multi_node = id->num_nodes.value_or(2) > 1;
    if (a.nccl) f.nccl = plan_nccl(true, env, load_libraries(fact_budget));
    return f;
}

// The one-element all-reduce, into gpu.nccl; true while a thread is still inside NCCL.
bool run_allreduce(sddp_handle* h, const CheckArgs& a, GpuFacts& gpu) {
    bool inside_nccl = false;
    // Half the budget: a rank whose all-reduce hangs must still reach the exchange after it
    // before its peers' wait there (the full timeout) runs out, to say so.
    auto sum = nccl::check_allreduce(sddp_nccl_comm(h), sddp_cuda_device(h), sddp_rank(h),
                                     sddp_world_size(h), a.timeout / 2, &inside_nccl);
    gpu.nccl = sum ? "ok" : "failed";
    gpu.nccl_detail =
        sum ? "sum " + std::to_string(sum->got) + " = " + std::to_string(sum->expected)
            : sum.error().message;
    return inside_nccl;
}

// Every rank's record (still encoded: decoded once the handle is closed) and GPU facts.
struct Gathered {
    std::vector<std::uint8_t> records;
    std::vector<GpuFacts> gpus;
};

// Both rounds of the exchange; the error is the library's.
Result<Gathered> exchange(sddp_handle* h, const LocalFacts& f) {
    const auto world = static_cast<std::size_t>(sddp_world_size(h));
    Gathered out;
    out.records.resize(world * kCheckRecordBytes);
    const auto bytes = encode_check_record(f.mine);
    std::vector<std::uint8_t> all_gpu(world * kGpuFactsBytes);
    const auto gpu_bytes = encode_gpu_facts(f.gpu);
    if (sddp_allgather(h, bytes.data(), bytes.size(), out.records.data()) != SDDP_OK ||
        sddp_allgather(h, gpu_bytes.data(), gpu_bytes.size(), all_gpu.data()) != SDDP_OK) {
        const std::string error = sddp_last_error();
        (void)sddp_abort(h, "slurm-ddp check: exchange failed");
        return make_error(Errc::peer_lost, error);
    }
    for (std::size_t i = 0; i < world; ++i) {
        out.gpus.push_back(decode_gpu_facts(
            std::span<const std::uint8_t>(all_gpu).subspan(i * kGpuFactsBytes, kGpuFactsBytes)));
    }
    return out;
}

Result<std::vector<CheckRecord>> decode_records(std::span<const std::uint8_t> all) {
    std::vector<CheckRecord> records;
    for (std::size_t i = 0; i < all.size() / kCheckRecordBytes; ++i) {
        auto r = decode_check_record(all.subspan(i * kCheckRecordBytes, kCheckRecordBytes));
        if (!r) {
            return make_error(Errc::protocol,
                              "rank " + std::to_string(i) + ": " + r.error().message);
        }
        records.push_back(std::move(*r));
    }
    return records;
}

// Every rank knows the same: after a failed all-reduce (perhaps still in flight) the
// communicators are aborted on every rank rather than finalised.
void close_handle(sddp_handle* h, bool allreduce_inside_nccl, const std::vector<GpuFacts>& gpus) {
    const bool nccl_failed = std::any_of(gpus.begin(), gpus.end(), [](const GpuFacts& g) {
        return !g.nccl.empty() && g.nccl != "ok";
    });
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
}

// The verdict: rank 0 prints the table (or, before a program, each named rank its lines).
int report(const CheckArgs& a, const EnvLookup& env, const LocalFacts& f,
           const std::vector<CheckRecord>& records, const std::vector<GpuFacts>& gpus) {
    auto problems = judge_step(records);
    for (auto& p : nccl_problems(records, gpus)) problems.push_back(std::move(p));
    std::string warnings;
    for (const auto& w : isolation_warnings(records, gpus)) warnings += "warning: " + w + "\n";
    const std::uint32_t rank = f.mine.rank;
    if (a.before_program) {
        if (rank == 0 && !warnings.empty()) print(warnings, true);
        if (problems.empty()) return 0;
        std::string text;
        for (const auto& p : problems) {
            if (rank == 0 || names(p, rank)) text += "problem: " + p.line() + "\n";
        }
        text += verdict_line(records.size(), problems) + "\n";
        print(text, true);
        return 1;
    }
    if (rank == 0) {
        if (a.json) {
            print(format_check_json(records, problems, std::nullopt), false);
        } else {
            print(format_check_report(records, problems) + warnings + nccl_lines(records, gpus) +
                      (f.nccl.note.empty() ? "" : f.nccl.note + "\n") + cluster_spec_line(env),
                  false);
        }
    }
    return problems.empty() ? 0 : 1;
}

}  // namespace

int run_check_command(const std::vector<std::string>& args) {
    CheckArgs a;
    if (auto code = parse_args(args, a)) return *code;
    const auto env = process_env();
    auto local = gather_local(a, env);
    if (!local) {
        print("slurm-ddp check: FAILED: " + local.error().message + "\n", true);
        return 1;
    }
    LocalFacts& f = *local;
    // A rank off rank 0's node that cannot resolve MASTER_ADDR cannot join: it says why now.
    // At its own timeout it would often be gone already: rank 0 gives up first to name the
    // missing ranks, and fail fast ends the step half a second after that.
    const bool said = f.multi_node && f.mine.node_rank > 0 && !f.mine.master_error.empty();
    if (said) print(problem_lines(local_problems(f.mine, f.multi_node)), true);
    sddp_options opts;
    sddp_options_init(&opts);
    opts.no_nccl = f.nccl.run ? 0 : 1;
    opts.timeout_ms = a.timeout.count();
    sddp_handle* h = nullptr;
    if (sddp_init(&opts, &h) != SDDP_OK) {
        return report_exchange_failure(a, env, f.mine, f.multi_node, said, sddp_last_error());
    }
    const bool inside_nccl = f.nccl.run && run_allreduce(h, a, f.gpu);
    auto step = exchange(h, f);
    if (!step) {
        return report_exchange_failure(a, env, f.mine, f.multi_node, said, step.error().message);
    }
    close_handle(h, inside_nccl, step->gpus);
    auto records = decode_records(step->records);
    if (!records) {
        return report_exchange_failure(a, env, f.mine, f.multi_node, said, records.error().message);
    }
    return report(a, env, f, *records, step->gpus);
}

}  // namespace sddp::check

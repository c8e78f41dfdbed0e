// SPDX-License-Identifier: Apache-2.0
#include "task_setup.hpp"

#include <unistd.h>

#include <cstdint>
#include <string>

#include "container_order.hpp"
#include "core/contract/contract.hpp"
#include "core/slurm/step_facts.hpp"
#include "core/slurm/step_hostfile.hpp"
#include "core/task/task_env.hpp"
#include "hostfile_io.hpp"
#include "os/make_dirs.hpp"
#include "plugin_log.hpp"
#include "plugin_state.hpp"
#include "spank_env.hpp"
#include "task_check.hpp"
#include "topology/task_host_facts.hpp"

namespace sddp::plugin {
namespace {

constexpr const char* kStepGpuVars[] = {"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
                                        "ZE_AFFINITY_MASK", "SLURM_STEP_GPUS"};

std::uint32_t job_uid(spank_t sp) {
    uid_t uid = 0;
    if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS) return ::geteuid();
    return static_cast<std::uint32_t>(uid);
}

int fail(spank_t sp, const StepFacts* facts, const std::string& message) {
    std::string where;
    if (facts != nullptr) {
        where = " (rank " + std::to_string(facts->procid) + " on " + facts->node_name + ", step " +
                std::to_string(facts->job_id) + "." + std::to_string(facts->step_id) + ")";
    }
    if (!ddp_asked(state())) {
        // Only the site default (default=on) turned DDP on: that may add variables to a step
        // that never asked, never fail it. Every failure comes before the first variable is
        // set, but for a failing spank_setenv itself.
        log_verbose("site default: this step runs without DDP: " + message + where);
        return stay_out(sp);
    }
    log_error(message + where);
    write_task_stderr(std::string(kPluginName) + ": error: " + message + where + "\n");
    return -1;
}

}  // namespace

// srun made a secret for every step in case this node turns --ddp on (local_context.cpp): a
// task the plugin does not set up must not keep it.
int stay_out(spank_t sp) {
    (void)spank_unsetenv(sp, contract::kSecretVar);
    return 0;
}

int setup_task(spank_t sp, const Result<StepOptions>& opts,
               std::optional<std::uint32_t>* configured_rank) {
    const EnvLookup env = spank_env(sp);
    // srun could not make a secret and, the user not having asked, launched anyway
    // (local_context.cpp): without it the rendezvous would refuse to run.
    if (!ddp_asked(state()) && !env(contract::kSecretVar))
        return fail(sp, nullptr, std::string(contract::kSecretVar) + " is not set");
    if (!opts) return fail(sp, nullptr, opts.error().message);
    auto facts = read_step_facts(env);
    if (!facts) return fail(sp, nullptr, facts.error().message);
    // pyxis listed after us would overwrite every variable set below (container_order.hpp).
    if (auto problem = container_order_problem()) return fail(sp, &*facts, *problem);
    // The secret as the program's rendezvous will read it: a malformed one fails the task here,
    // before the program runs, not in the middle of its start.
    if (const auto v = env(contract::kSecretVar); v && *v == kOversizedValue) {
        return fail(sp, &*facts,
                    std::string(contract::kSecretVar) +
                        " is longer than 1 MiB; srun --ddp sets it to 64 hex digits for each "
                        "step: unset it");
    }
    if (auto secret = contract::read_secret(env); !secret)
        return fail(sp, &*facts, secret.error().message);

    TaskHostFacts host = gather_task_host_facts(env, *facts, map_env(state().step_gpu_env));
    if (state().step_env_seen) host.master_at_launch = !state().step_master_env.empty();
    host.uid = job_uid(sp);
    auto task = derive_task_env(env, *opts, *facts, host, host_lookups());
    if (!task) return fail(sp, &*facts, task.error().message);
    for (const auto& note : task->notes) log_verbose(note);
    if (task->debug_dir) {
        if (auto st = make_private_directory(*task->debug_dir); !st)
            return fail(sp, &*facts, st.error().message);
    }
    if (task->hostfile) {
        if (auto st = write_step_hostfile(*task->hostfile, host.uid); !st)
            return fail(sp, &*facts, st.error().message);
    }
    if (auto st = apply_env(sp, task->vars); !st) return fail(sp, &*facts, st.error().message);

    log_debug(task->summary);
    if (!task->table.empty()) write_task_stderr(task->table);
    *configured_rank = task->launch.rank;
    if (task->options.check) {
        const int rc = run_task_check(sp, check_timeout_seconds(task->options));
        if (rc != 0 && !ddp_asked(state())) {
            log_verbose("site default: the step failed its check; it runs all the same");
            return 0;
        }
        return rc;
    }
    return 0;
}

void remember_step_env(spank_t sp) {
    const EnvLookup env = spank_env(sp);
    for (const char* name : kStepGpuVars) {
        if (auto v = env(name)) state().step_gpu_env[name] = *v;
    }
    state().step_env_seen = true;
    for (const char* name : {"MASTER_ADDR", "MASTER_PORT"}) {
        if (auto v = env(name)) state().step_master_env[name] = *v;
    }
}

void remove_hostfile_of_step(spank_t sp, std::uint32_t step_id) {
    std::uint32_t job_id = 0;
    std::uint32_t nodeid = 0;
    if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS) return;
    if (spank_get_item(sp, S_JOB_NODEID, &nodeid) != ESPANK_SUCCESS) return;
    const std::uint32_t uid = job_uid(sp);
    remove_step_hostfile(step_hostfile_path(uid, job_id, step_id, nodeid), uid);
}

}  // namespace sddp::plugin

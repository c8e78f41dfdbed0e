// SPDX-License-Identifier: Apache-2.0
#include "core/slurm/step_facts.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>

#include "core/base/numbers.hpp"
#include "core/slurm/hostlist.hpp"
#include "core/slurm/task_counts.hpp"

namespace sddp {
namespace {

constexpr std::uint64_t kMaxU32 = 0xffffffffu;
constexpr std::uint64_t kMaxTasks = 1u << 24;  // 16M tasks: far beyond any real step

std::string what_to_do() {
    return "; this variable is set by Slurm's srun: run the program with srun inside an "
           "allocation, or report the environment to your site admins";
}

Result<std::string> required(const EnvLookup& env, std::string_view name) {
    auto v = env(name);
    if (!v)
        return make_error(Errc::missing_input, std::string(name) + " is not set" + what_to_do());
    if (v->empty())
        return make_error(Errc::missing_input, std::string(name) + " is empty" + what_to_do());
    return *v;
}

Result<std::uint32_t> number(std::string_view name, std::string_view text, std::uint64_t max) {
    auto v = parse_decimal(text, max);
    if (!v) {
        return make_error(Errc::invalid_input, std::string(name) + "=" + quote_value(text) +
                                                   " is not a whole number from 0 to " +
                                                   std::to_string(max) + what_to_do());
    }
    return static_cast<std::uint32_t>(*v);
}

Result<std::uint32_t> required_number(const EnvLookup& env, std::string_view name,
                                      std::uint64_t max) {
    SDDP_TRY(text, required(env, name));
    return number(name, text, max);
}

// The step's value, or the job's where an older Slurm or a batch context lacks the step's.
Result<std::uint32_t> step_or_job_number(const EnvLookup& env, std::string_view step_name,
                                         std::string_view job_name, std::uint64_t max) {
    if (auto v = env(step_name); v && !v->empty()) return number(step_name, *v, max);
    return required_number(env, job_name, max);
}

Result<std::string> step_or_job_text(const EnvLookup& env, std::string_view step_name,
                                     std::string_view job_name) {
    if (auto v = env(step_name); v && !v->empty()) return *v;
    return required(env, job_name);
}

// The ids and counts of the task and its step, each checked against the others.
Status read_counts(const EnvLookup& env, StepFacts& f) {
    SDDP_TRY(job_id, required_number(env, "SLURM_JOB_ID", kMaxU32));
    SDDP_TRY(step_id, step_or_job_number(env, "SLURM_STEP_ID", "SLURM_STEPID", kMaxU32));
    SDDP_TRY(ntasks, step_or_job_number(env, "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS", kMaxTasks));
    // The node list is expanded up to this count: the README's cap of 2^20 hosts.
    SDDP_TRY(nnodes,
             step_or_job_number(env, "SLURM_STEP_NUM_NODES", "SLURM_NNODES", kMaxHostlistHosts));
    SDDP_TRY(procid, required_number(env, "SLURM_PROCID", kMaxTasks));
    SDDP_TRY(localid, required_number(env, "SLURM_LOCALID", kMaxTasks));
    SDDP_TRY(nodeid, required_number(env, "SLURM_NODEID", kMaxTasks));
    f.job_id = job_id;
    f.step_id = step_id;
    f.ntasks = ntasks;
    f.nnodes = nnodes;
    f.procid = procid;
    f.localid = localid;
    f.nodeid = nodeid;
    if (f.ntasks == 0) {
        return make_error(Errc::invalid_input,
                          "SLURM_STEP_NUM_TASKS=0: a step has at least one task" + what_to_do());
    }
    if (f.nnodes == 0) {
        return make_error(Errc::invalid_input,
                          "SLURM_STEP_NUM_NODES=0: a step has at least one node" + what_to_do());
    }
    if (f.procid >= f.ntasks) {
        return make_error(Errc::invalid_input,
                          "SLURM_PROCID=" + std::to_string(f.procid) +
                              " is not below the step's task count SLURM_STEP_NUM_TASKS=" +
                              std::to_string(f.ntasks) + what_to_do());
    }
    if (f.nodeid >= f.nnodes) {
        return make_error(Errc::invalid_input,
                          "SLURM_NODEID=" + std::to_string(f.nodeid) +
                              " is not below the step's node count SLURM_STEP_NUM_NODES=" +
                              std::to_string(f.nnodes) + what_to_do());
    }
    return ok_status();
}

// The step's nodes, as many as SLURM_STEP_NUM_NODES says.
Status read_nodes(const EnvLookup& env, StepFacts& f) {
    SDDP_TRY(nodelist, step_or_job_text(env, "SLURM_STEP_NODELIST", "SLURM_NODELIST"));
    auto nodes = expand_hostlist(nodelist, std::size_t{f.nnodes} + 1);
    if (!nodes) {
        return make_error(nodes.error().code, "SLURM_STEP_NODELIST: " + nodes.error().message);
    }
    f.nodes = std::move(*nodes);
    if (f.nodes.size() != f.nnodes) {
        return make_error(Errc::invalid_input, "SLURM_STEP_NODELIST=" + quote_value(nodelist) +
                                                   " names " + std::to_string(f.nodes.size()) +
                                                   " node(s) but SLURM_STEP_NUM_NODES=" +
                                                   std::to_string(f.nnodes) + what_to_do());
    }
    return ok_status();
}

// The tasks on each node, adding up to the step's, and this node's place among them.
Status read_tasks_per_node(const EnvLookup& env, StepFacts& f) {
    SDDP_TRY(tpn, step_or_job_text(env, "SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"));
    auto counts = expand_task_counts(tpn, std::size_t{f.nnodes} + 1);
    if (!counts) {
        return make_error(counts.error().code,
                          "SLURM_STEP_TASKS_PER_NODE: " + counts.error().message);
    }
    f.tasks_per_node = std::move(*counts);
    if (f.tasks_per_node.size() != f.nnodes) {
        return make_error(Errc::invalid_input,
                          "SLURM_STEP_TASKS_PER_NODE=" + quote_value(tpn) + " gives counts for " +
                              std::to_string(f.tasks_per_node.size()) +
                              " node(s) but the step has SLURM_STEP_NUM_NODES=" +
                              std::to_string(f.nnodes) + what_to_do());
    }
    const std::uint64_t sum =
        std::accumulate(f.tasks_per_node.begin(), f.tasks_per_node.end(), std::uint64_t{0});
    if (sum != f.ntasks) {
        return make_error(
            Errc::invalid_input,
            "SLURM_STEP_TASKS_PER_NODE=" + quote_value(tpn) + " adds up to " + std::to_string(sum) +
                " task(s) but SLURM_STEP_NUM_TASKS=" + std::to_string(f.ntasks) + what_to_do());
    }
    f.node_name = env("SLURMD_NODENAME").value_or("");
    // The node lists are sorted by name, but SLURM_NODEID of a heterogeneous step follows the
    // components' order: this node's counts are found by its name where Slurm gives it.
    f.node_index = f.nodeid;
    if (!f.node_name.empty()) {
        const auto it = std::find(f.nodes.begin(), f.nodes.end(), f.node_name);
        if (it != f.nodes.end()) f.node_index = static_cast<std::uint32_t>(it - f.nodes.begin());
    }
    if (f.localid >= f.tasks_per_node[f.node_index]) {
        return make_error(Errc::invalid_input,
                          "SLURM_LOCALID=" + std::to_string(f.localid) +
                              " is not below this node's task count " +
                              std::to_string(f.tasks_per_node[f.node_index]) +
                              " (SLURM_STEP_TASKS_PER_NODE=" + quote_value(tpn) + ", node " +
                              quote_value(f.nodes[f.node_index]) + ")" + what_to_do());
    }
    return ok_status();
}

// Every component's node list of a heterogeneous step, or none.
Status read_het_components(const EnvLookup& env, StepFacts& f) {
    const auto v = env("SLURM_HET_SIZE");
    if (!v || v->empty()) return ok_status();
    // Slurm caps components at MAX_HET_JOB_COMPONENTS (128).
    SDDP_TRY(het_size, number("SLURM_HET_SIZE", *v, 128));
    for (std::uint32_t i = 0; i < het_size; ++i) {
        // salloc exports SLURM_NODELIST_HET_GROUP_<i>; sbatch only SLURM_JOB_NODELIST_...
        const std::string suffix = "NODELIST_HET_GROUP_" + std::to_string(i);
        auto list = env("SLURM_" + suffix);
        if (!list || list->empty()) list = env("SLURM_JOB_" + suffix);
        // Without every component's list the order cannot be rebuilt; rank 0's own check
        // (launch_env) then refuses instead of guessing.
        if (!list || list->empty()) {
            f.het_component_nodelists.clear();
            break;
        }
        f.het_component_nodelists.push_back(std::move(*list));
    }
    return ok_status();
}

// The optional facts: how tasks are spread, the host file, reserved ports, CPUs per task.
Status read_layout_extras(const EnvLookup& env, StepFacts& f) {
    f.distribution = env("SLURM_DISTRIBUTION").value_or("");
    if (auto v = env("SLURM_HOSTFILE"); v && !v->empty()) f.hostfile = *v;
    if (auto v = env("SLURM_STEP_RESV_PORTS"); v && !v->empty()) f.resv_ports = *v;
    if (auto v = env("SLURM_DIST_PLANESIZE"); v && !v->empty()) {
        SDDP_TRY(plane, number("SLURM_DIST_PLANESIZE", *v, kMaxTasks));
        f.plane_size = plane;
    }
    SDDP_CHECK(read_het_components(env, f));
    if (auto v = env("SLURM_CPUS_PER_TASK"); v && !v->empty()) {
        SDDP_TRY(cpt, number("SLURM_CPUS_PER_TASK", *v, 1u << 20));
        f.cpus_per_task = cpt;
    }
    return ok_status();
}

}  // namespace

bool is_special_step(std::uint32_t step_id) {
    return step_id >= kFirstSpecialStepId;
}

std::optional<std::uint32_t> read_step_id(const EnvLookup& env) {
    for (const char* name : {"SLURM_STEP_ID", "SLURM_STEPID"}) {
        if (auto v = env(name)) {
            if (auto n = parse_decimal(*v, kMaxU32)) return static_cast<std::uint32_t>(*n);
        }
    }
    return std::nullopt;
}

Result<StepFacts> read_step_facts(const EnvLookup& env) {
    StepFacts f;
    SDDP_CHECK(read_counts(env, f));
    SDDP_CHECK(read_nodes(env, f));
    SDDP_CHECK(read_tasks_per_node(env, f));
    SDDP_CHECK(read_layout_extras(env, f));
    return f;
}

}  // namespace sddp

// SPDX-License-Identifier: Apache-2.0
// derive_task_env: the whole per-task pipeline the plugin and `slurm-ddp env` share.
#include <gtest/gtest.h>

#include <map>

#include "core/task_env.hpp"

using namespace sddp;

namespace {

using Vars = std::map<std::string, std::string, std::less<>>;

// Task `procid` of `srun -N2 -n4 --gres=gpu:2` on n1/n2, Slurm's GPU variables not narrowed.
Vars gpu_task(std::uint32_t procid) {
    const std::uint32_t node = procid / 2, local = procid % 2;
    return Vars{{"SLURM_JOB_ID", "77"},
                {"SLURM_STEP_ID", "0"},
                {"SLURM_PROCID", std::to_string(procid)},
                {"SLURM_LOCALID", std::to_string(local)},
                {"SLURM_NODEID", std::to_string(node)},
                {"SLURM_STEP_NUM_TASKS", "4"},
                {"SLURM_STEP_NUM_NODES", "2"},
                {"SLURM_STEP_NODELIST", "n[1-2]"},
                {"SLURM_STEP_TASKS_PER_NODE", "2(x2)"},
                {"SLURMD_NODENAME", "n" + std::to_string(node + 1)},
                {"SLURM_DISTRIBUTION", "block"},
                {"CUDA_VISIBLE_DEVICES", "0,1"},
                {"SLURM_STEP_GPUS", "0,1"},
                {"SLURM_GPUS_ON_NODE", "2"}};
}

std::map<std::string, std::string> as_map(const TaskEnv& t) {
    std::map<std::string, std::string> m;
    for (const auto& v : t.vars) m[v.name] = v.value;
    return m;
}

Result<TaskEnv> derive(const Vars& vars, const DdpOptions& opts, const TaskHostFacts& host = {},
                       TableWanted table = TableWanted::rank0_if_verbose) {
    const EnvLookup env = map_env(vars);
    auto facts = read_step_facts(env);
    if (!facts) return facts.take_error();
    return derive_task_env(env, opts, *facts, host, table);
}

}  // namespace

TEST(TaskEnv, GpuStepGetsLaunchBindingAndThreads) {
    TaskHostFacts host;
    host.task_cpus = std::vector<int>{2, 3};
    auto t = derive(gpu_task(3), {}, host);
    ASSERT_TRUE(t.ok()) << t.error().message;
    auto m = as_map(*t);
    EXPECT_EQ(m["RANK"], "3");
    EXPECT_EQ(m["LOCAL_RANK"], "1");
    EXPECT_EQ(m["MASTER_ADDR"], "n1");
    // The GPU binding is part of the same list: the own GPU at index LOCAL_RANK.
    EXPECT_EQ(m["CUDA_VISIBLE_DEVICES"], "0,1");
    EXPECT_EQ(m["SLURM_DDP_DEVICE"], "1");
    // Two bound CPUs and no --cpus-per-task: two threads.
    EXPECT_EQ(m["OMP_NUM_THREADS"], "2");
    EXPECT_TRUE(t->table.empty());
    EXPECT_NE(t->summary.find("rank 3/4"), std::string::npos) << t->summary;
}

TEST(TaskEnv, CpusPerTaskWinsOverAffinity) {
    auto vars = gpu_task(0);
    vars["SLURM_CPUS_PER_TASK"] = "3";
    TaskHostFacts host;
    host.task_cpus = std::vector<int>{0};
    auto t = derive(vars, {}, host);
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(as_map(*t)["OMP_NUM_THREADS"], "3");
}

TEST(TaskEnv, CpuStepSetsNoGpuVariables) {
    auto vars = gpu_task(1);
    vars.erase("CUDA_VISIBLE_DEVICES");
    vars.erase("SLURM_STEP_GPUS");
    vars.erase("SLURM_GPUS_ON_NODE");
    auto t = derive(vars, {});
    ASSERT_TRUE(t.ok()) << t.error().message;
    auto m = as_map(*t);
    EXPECT_EQ(m.count("CUDA_VISIBLE_DEVICES"), 0u);
    EXPECT_EQ(m.count("SLURM_DDP_DEVICE"), 0u);
    EXPECT_EQ(m["WORLD_SIZE"], "4");
    EXPECT_FALSE(t->binding.changed);
}

TEST(TaskEnv, StepLevelListsUndoNarrowing) {
    // --gpus-per-task=1: Slurm narrowed local rank 1 to GPU 1; the step-level lists (user_init)
    // let `local` show the whole node list with the task's own GPU at LOCAL_RANK.
    auto vars = gpu_task(1);
    vars["CUDA_VISIBLE_DEVICES"] = "1";
    vars["SLURM_STEP_GPUS"] = "1";
    vars["SLURMD_TRES_BIND"] = "gpu:per_task:1";
    TaskHostFacts host;
    host.step_gpu_env = map_env(Vars{{"CUDA_VISIBLE_DEVICES", "0,1"}, {"SLURM_STEP_GPUS", "0,1"}});
    auto with_step = derive(vars, {}, host);
    ASSERT_TRUE(with_step.ok()) << with_step.error().message;
    EXPECT_EQ(with_step->binding.own, "1");
    auto without_step = derive(vars, {});
    ASSERT_TRUE(without_step.ok()) << without_step.error().message;
    EXPECT_EQ(without_step->binding.own, "1");
    // Both agree on the own GPU; only the visible list differs.
    EXPECT_NE(with_step->binding.visible.size(), without_step->binding.visible.size());
}

TEST(TaskEnv, TableOnlyForVerboseRankZeroUnlessAsked) {
    DdpOptions verbose;
    verbose.verbose = true;
    auto r0 = derive(gpu_task(0), verbose);
    ASSERT_TRUE(r0.ok()) << r0.error().message;
    EXPECT_NE(r0->table.find("RANK"), std::string::npos);
    auto r1 = derive(gpu_task(1), verbose);
    ASSERT_TRUE(r1.ok()) << r1.error().message;
    EXPECT_TRUE(r1->table.empty());
    auto asked = derive(gpu_task(2), {}, {}, TableWanted::always);
    ASSERT_TRUE(asked.ok()) << asked.error().message;
    EXPECT_NE(asked->table.find("RANK"), std::string::npos);
    auto never = derive(gpu_task(0), verbose, {}, TableWanted::never);
    ASSERT_TRUE(never.ok()) << never.error().message;
    EXPECT_TRUE(never->table.empty());
}

TEST(TaskEnv, ErrorsFromEveryStageReachTheCaller) {
    DdpOptions bad_policy;
    bad_policy.gpu_bind = "nearest";
    auto t = derive(gpu_task(0), bad_policy);
    ASSERT_FALSE(t.ok());
    EXPECT_NE(t.error().message.find("nearest"), std::string::npos) << t.error().message;

    auto vars = gpu_task(0);
    vars["SLURM_STEP_TASKS_PER_NODE"] = "3(x2)";
    DdpOptions none;
    auto facts_err = derive(vars, none);
    ASSERT_FALSE(facts_err.ok());

    // Four tasks on a node with two GPUs: the binding refuses unless sharing is allowed.
    auto crowded = gpu_task(0);
    crowded["SLURM_STEP_TASKS_PER_NODE"] = "4";
    crowded["SLURM_STEP_NUM_NODES"] = "1";
    crowded["SLURM_STEP_NODELIST"] = "n1";
    auto refused = derive(crowded, {});
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message.find("gpu-share"), std::string::npos)
        << refused.error().message;
}

TEST(TaskEnv, TopologyOnlyWhereUsed) {
    DdpOptions opts;
    EXPECT_FALSE(needs_topology(opts));
    opts.gpu_bind = "closest";
    EXPECT_TRUE(needs_topology(opts));
    opts.gpu_bind = "single";
    opts.nccl_hints = true;
    EXPECT_TRUE(needs_topology(opts));
}

// SPDX-License-Identifier: Apache-2.0
// The trainer-facing pieces wired into derive_task_env, the one derivation the plugin and
// `slurm-ddp env` both call: what reaches the variables and the table.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "core/task/debug_env.hpp"
#include "core/task/framework_env.hpp"
#include "core/task/task_env.hpp"
#include "core/task/trainer_env.hpp"
#include "step_vars.hpp"

using namespace sddp;
using namespace sddp::unit;

// ---- wired into derive_task_env (what the plugin and slurm-ddp env both call) -------------------

TEST(TrainerTaskEnv, LauncherGetsTheNodesGpusAndNoPerTaskBinding) {
    // srun --ddp=launcher -N2 --ntasks-per-node=1 --gpus-per-task=1 on 4-GPU nodes: Slurm narrowed
    // the task to GPU 2; the step had 0-3 on the node.
    auto v = task(1, 0, 1, 2, "n[1-2]", 2, "1(x2)", "n2");
    v["CUDA_VISIBLE_DEVICES"] = "2";
    v["SLURM_STEP_GPUS"] = "2";
    v["SLURM_GPUS_ON_NODE"] = "4";
    TaskHostFacts host;
    host.step_gpu_env =
        map_env({{"CUDA_VISIBLE_DEVICES", "0,1,2,3"}, {"SLURM_STEP_GPUS", "0,1,2,3"}});
    TaskLookups lookups;
    lookups.task_cpus = [] {
        return std::optional<std::vector<int>>(std::vector<int>{0, 1, 2, 3});
    };
    const EnvLookup env = map_env(v);
    auto t = derive_task_env(env, opts_of("launcher,torchelastic,verbose"), facts_of(v), host,
                             lookups, TableWanted::always);
    ASSERT_TRUE(t.ok()) << t.error().message;
    auto m = as_map(t->vars);
    EXPECT_TRUE(t->launcher);
    EXPECT_EQ(m["CUDA_VISIBLE_DEVICES"], "0,1,2,3");
    EXPECT_EQ(m["PET_NPROC_PER_NODE"], "4");
    EXPECT_EQ(m["PET_NODE_RANK"], "1");
    EXPECT_EQ(m.count("SLURM_DDP_DEVICE"), 0u);
    EXPECT_EQ(m.count("OMP_NUM_THREADS"), 0u);
    EXPECT_EQ(m.count("RANK"), 0u);
    EXPECT_EQ(m["TORCHELASTIC_RUN_ID"], "1234.3");
    EXPECT_EQ(m["TORCH_NCCL_ASYNC_ERROR_HANDLING"], "1");
    EXPECT_NE(t->table.find("launcher: PET_NNODES=2 PET_NPROC_PER_NODE=4 (gpus)"),
              std::string::npos)
        << t->table;
}

TEST(TrainerTaskEnv, DebugAndGlooHintsReachTheVariablesAndTheTable) {
    auto v = task(0, 0, 0, 2, "n[1-2]", 2, "1(x2)", "n1");
    v["SLURM_SUBMIT_DIR"] = "/home/u";
    TaskLookups lookups;
    lookups.interface_towards = [](const std::string&, std::string*) {
        return std::optional<std::string>("eth0");
    };
    const EnvLookup env = map_env(v);
    auto t = derive_task_env(env, opts_of("debug,net-hints,verbose"), facts_of(v), {}, lookups);
    ASSERT_TRUE(t.ok()) << t.error().message;
    auto m = as_map(t->vars);
    EXPECT_EQ(t->debug_dir, "/home/u/slurm-ddp-debug/1234.3");
    EXPECT_EQ(m["GLOO_SOCKET_IFNAME"], "eth0");
    // NCCL's socket interface is the node's one, the same as gloo's, on every rank.
    EXPECT_EQ(m["NCCL_SOCKET_IFNAME"], "=eth0");
    EXPECT_EQ(m.count("NCCL_IB_HCA"), 0u);
    EXPECT_EQ(m["NCCL_DEBUG_FILE"], "/home/u/slurm-ddp-debug/1234.3/nccl.rank0.log");
    EXPECT_NE(t->table.find("debug: NCCL/torch diagnostics in /home/u/slurm-ddp-debug/1234.3"),
              std::string::npos)
        << t->table;
    EXPECT_FALSE(t->launcher);
    EXPECT_EQ(m["RANK"], "0");
}

// ---- the names it may add
// ------------------------------------------------------------------------

// trainer_variable_names() is the list the docs and the "untouched" checks rely on: whatever
// option turns an addition on, the name it adds must be on it.
TEST(TrainerEnv, EveryNameItAddsIsListed) {
    auto v = task(0, 0, 0, 2, "n[1-2]", 2, "1(x2)", "n1");
    v["SLURM_SUBMIT_DIR"] = "/home/u";
    v["SLURM_RESTART_COUNT"] = "1";
    const StepFacts f = facts_of(v);
    const std::vector<std::string> listed = trainer_variable_names();
    std::set<std::string> added_somewhere;
    for (const char* text : {"", "launcher", "torchelastic", "debug", "net-hints",
                             "launcher,torchelastic,debug,net-hints"}) {
        const StepOptions o = opts_of(text);
        auto launch = derive_launch_env(f, o, {});
        ASSERT_TRUE(launch.ok()) << text << ": " << launch.error().message;
        TrainerEnvInput in;
        in.facts = &f;
        in.launch = &*launch;
        in.opts = &o;
        in.env = map_env(v);
        in.node_gpus = 4u;
        in.gloo_ifname = "eth0";
        auto t = derive_trainer_env(in);
        ASSERT_TRUE(t.ok()) << text << ": " << t.error().message;
        std::set<std::string> from_launch;
        for (const auto& a : launch->vars) from_launch.insert(a.name);
        for (const auto& a : t->vars) {
            if (from_launch.count(a.name) != 0) continue;
            added_somewhere.insert(a.name);
            EXPECT_NE(std::find(listed.begin(), listed.end(), a.name), listed.end())
                << "--ddp=" << text << " adds " << a.name
                << ", which trainer_variable_names() does not list";
        }
    }
    // Each option above added something: the loop checked names, not an empty set.
    EXPECT_GE(added_somewhere.size(), 5u);
}

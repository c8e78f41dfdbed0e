// SPDX-License-Identifier: Apache-2.0
// The trainer-facing pieces wired into derive_task_env, the one derivation the plugin and
// `slurm-ddp env` both call: what reaches the variables and the table.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/task/debug_env.hpp"
#include "core/task/framework_env.hpp"
#include "core/task/task_env.hpp"
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

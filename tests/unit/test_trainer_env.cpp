// SPDX-License-Identifier: Apache-2.0
// The pure pieces behind launcher, torchelastic, worker defaults, rank-order, port blocks,
// net-hints and debug: each from Slurm-shaped facts, as the plugin and `slurm-ddp env` call them.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "core/contract.hpp"
#include "core/debug_env.hpp"
#include "core/framework_env.hpp"
#include "core/launch_env.hpp"
#include "core/launcher_env.hpp"
#include "core/net_hints.hpp"
#include "core/options.hpp"
#include "core/port_block.hpp"
#include "core/rank_order.hpp"
#include "core/step_facts.hpp"
#include "core/task_env.hpp"

using namespace sddp;

namespace {

using Vars = std::map<std::string, std::string, std::less<>>;

Vars task(std::uint32_t procid, std::uint32_t localid, std::uint32_t nodeid, std::uint32_t ntasks,
          const std::string& nodelist, std::uint32_t nnodes, const std::string& per_node,
          const std::string& nodename, const std::string& dist = "block") {
    return Vars{{"SLURM_JOB_ID", "1234"},
                {"SLURM_STEP_ID", "3"},
                {"SLURM_PROCID", std::to_string(procid)},
                {"SLURM_LOCALID", std::to_string(localid)},
                {"SLURM_NODEID", std::to_string(nodeid)},
                {"SLURM_STEP_NUM_TASKS", std::to_string(ntasks)},
                {"SLURM_STEP_NUM_NODES", std::to_string(nnodes)},
                {"SLURM_STEP_NODELIST", nodelist},
                {"SLURM_STEP_TASKS_PER_NODE", per_node},
                {"SLURMD_NODENAME", nodename},
                {"SLURM_DISTRIBUTION", dist}};
}

StepFacts facts_of(const Vars& v) {
    auto f = read_step_facts(map_env(v));
    EXPECT_TRUE(f.ok()) << f.error().message;
    return *f;
}

std::map<std::string, std::string> as_map(const std::vector<EnvAssignment>& vars) {
    std::map<std::string, std::string> m;
    for (const auto& v : vars) m[v.name] = v.value;
    return m;
}

DdpOptions opts_of(const char* text) {
    auto o = parse_user_options(text);
    EXPECT_TRUE(o.ok()) << o.error().message;
    return *o;
}

}  // namespace

// ---- options -------------------------------------------------------------------------------

TEST(TrainerOptions, ParsesNewKeys) {
    auto o = opts_of("launcher,nproc=8,torchelastic,ports=16,net-hints,debug=/scratch/d");
    EXPECT_TRUE(*o.launcher);
    EXPECT_EQ(*o.nproc, 8u);
    EXPECT_TRUE(*o.torchelastic);
    EXPECT_EQ(*o.ports, 16u);
    EXPECT_TRUE(*o.nccl_hints);
    EXPECT_TRUE(*o.debug);
    EXPECT_EQ(*o.debug_dir, "/scratch/d");
    EXPECT_EQ(describe_options(o),
              "ports=16,net-hints,launcher,nproc=8,torchelastic,debug=/scratch/d");
    EXPECT_EQ(*opts_of("rank-order=node").rank_order, RankOrder::node);
    EXPECT_TRUE(*opts_of("nccl-hints").nccl_hints);  // the older name still works
    EXPECT_FALSE(opts_of("debug").debug_dir.has_value());
    EXPECT_FALSE(*opts_of("debug=no").debug);
}

TEST(TrainerOptions, SiteDefaultsAndUserOverride) {
    auto site = parse_site_arguments({"ports=8", "torchelastic", "rank-order=node", "debug=dbg"});
    ASSERT_TRUE(site.ok()) << site.error().message;
    auto merged = merge_options(*site, opts_of("ports=2,torchelastic=no"));
    EXPECT_EQ(*merged.ports, 2u);
    EXPECT_FALSE(*merged.torchelastic);
    EXPECT_EQ(*merged.rank_order, RankOrder::node);
    EXPECT_EQ(*merged.debug_dir, "dbg");
}

struct BadTrainerOption {
    const char* text;
    const char* must_mention;
};
class TrainerOptionErrors : public ::testing::TestWithParam<BadTrainerOption> {};

TEST_P(TrainerOptionErrors, NamesTheProblemAndTheFix) {
    auto o = parse_user_options(GetParam().text);
    ASSERT_FALSE(o.ok()) << GetParam().text;
    EXPECT_EQ(o.error().code, Errc::invalid_input);
    EXPECT_NE(o.error().message.find(GetParam().must_mention), std::string::npos)
        << o.error().message;
}

INSTANTIATE_TEST_SUITE_P(
    All, TrainerOptionErrors,
    ::testing::Values(BadTrainerOption{"ports=0", "from 1 to 256"},
                      BadTrainerOption{"ports=999", "ports='999'"},
                      BadTrainerOption{"ports", "ports=4"},
                      BadTrainerOption{"nproc=4", "without launcher"},
                      BadTrainerOption{"launcher,nproc=x", "from 1 to 1024"},
                      BadTrainerOption{"rank-order=cyclic", "block"},
                      BadTrainerOption{"launcher,rank-order=node", "drop rank-order"},
                      BadTrainerOption{"net-hints,nccl-hints", "twice"},
                      BadTrainerOption{"debug=a b", "without spaces"},
                      BadTrainerOption{"launcher=maybe", "launcher=yes|no"},
                      BadTrainerOption{"torchelastic=2", "torchelastic=yes|no"}));

// ---- rank-order ------------------------------------------------------------------------------

TEST(RankOrder, NodeOrderIsContiguousPerNodeUnderCyclic) {
    // srun -N2 -n5 -m cyclic: node 0 runs procids 0,2,4 and node 1 runs 1,3.
    const std::vector<std::array<std::uint32_t, 3>> tasks{// procid, localid, nodeid
                                                          {0, 0, 0},
                                                          {1, 0, 1},
                                                          {2, 1, 0},
                                                          {3, 1, 1},
                                                          {4, 2, 0}};
    std::set<std::uint32_t> seen;
    for (const auto& [procid, localid, nodeid] : tasks) {
        auto f = facts_of(task(procid, localid, nodeid, 5, "n[1-2]", 2, "3,2",
                               nodeid == 0 ? "n1" : "n2", "cyclic"));
        const auto r = ordered_rank(f, RankOrder::node);
        EXPECT_EQ(r, nodeid * 3 + localid) << procid;
        EXPECT_EQ(ordered_rank(f, RankOrder::block), procid);
        seen.insert(r);
        DdpOptions o = opts_of("rank-order=node");
        auto e = derive_launch_env(f, o, {});
        ASSERT_TRUE(e.ok()) << e.error().message;
        EXPECT_EQ(as_map(e->vars)["RANK"], std::to_string(nodeid * 3 + localid));
        EXPECT_EQ(as_map(e->vars)["ROLE_RANK"], std::to_string(nodeid * 3 + localid));
    }
    EXPECT_EQ(seen.size(), 5u);
    auto f = facts_of(task(0, 0, 0, 5, "n[1-2]", 2, "3,2", "n1", "plane=2"));
    using L = std::vector<std::vector<std::uint32_t>>;
    EXPECT_EQ(*ordered_ranks_per_node(f, RankOrder::node), (L{{0, 1, 2}, {3, 4}}));
    EXPECT_EQ(*ordered_ranks_per_node(f, RankOrder::block), (L{{0, 1, 4}, {2, 3}}));
}

// ---- port blocks -------------------------------------------------------------------------------

TEST(PortBlock, ConcurrentStepsOfOneJobAreDisjoint) {
    const DdpOptions o;
    std::vector<PortBlock> blocks;
    for (std::uint32_t step = 0; step < 64; ++step) {
        PortBlockInput in;
        in.job_id = 777;
        in.step_id = step;
        auto b = choose_port_block(in, o);
        ASSERT_TRUE(b.ok()) << b.error().message;
        EXPECT_EQ(b->last - b->first + 1, static_cast<int>(kDefaultPortBlock));
        EXPECT_GE(b->first, kDefaultPortRange.first);
        EXPECT_LE(b->last, kDefaultPortRange.last);
        for (const auto& other : blocks)
            EXPECT_TRUE(b->last < other.first || b->first > other.last)
                << port_block_text(*b) << " overlaps " << port_block_text(other);
        blocks.push_back(*b);
    }
}

TEST(PortBlock, CongruentJobIdsLandApart) {
    // base + jobid % 10000 schemes collide here; the mixed hash does not.
    PortBlockInput a, b;
    a.job_id = 10007;
    b.job_id = 20007;
    auto pa = choose_port_block(a, {}), pb = choose_port_block(b, {});
    ASSERT_TRUE(pa.ok() && pb.ok());
    EXPECT_TRUE(pa->last < pb->first || pa->first > pb->last);
}

TEST(PortBlock, SizesFromOptionsAndSources) {
    PortBlockInput in;
    in.job_id = 5;
    auto b = choose_port_block(in, opts_of("port=29500,ports=8"));
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(port_block_text(*b), "29500-29507");
    EXPECT_EQ(b->source, PortSource::option);
    in.user_port = 40000;
    EXPECT_EQ(port_block_text(*choose_port_block(in, {})), "40000-40003");
    EXPECT_EQ(choose_port_block(in, {})->source, PortSource::user);
    in.user_port = 65534;
    auto high = choose_port_block(in, {});
    ASSERT_FALSE(high.ok());
    EXPECT_NE(high.error().message.find("65535"), std::string::npos);
}

TEST(PortBlock, ReservedPortsMustHoldTheBlock) {
    PortBlockInput in;
    in.resv_ports = "12000-12005";
    auto b = choose_port_block(in, {});
    ASSERT_TRUE(b.ok()) << b.error().message;
    EXPECT_EQ(port_block_text(*b), "12000-12003");
    EXPECT_EQ(b->source, PortSource::reserved);
    in.resv_ports = "12000,12001-12002,12003";
    EXPECT_EQ(port_block_text(*choose_port_block(in, {})), "12000-12003");
    in.resv_ports = "12000-12001";
    // Slurm reserves a few ports for every step where MpiParams=ports= is set: with the default
    // size the block is Slurm's; with a size asked for, fewer is an error naming --resv-ports.
    auto dflt = choose_port_block(in, {});
    ASSERT_TRUE(dflt.ok()) << dflt.error().message;
    EXPECT_EQ(port_block_text(*dflt), "12000-12001");
    auto few = choose_port_block(in, opts_of("ports=4"));
    ASSERT_FALSE(few.ok());
    EXPECT_NE(few.error().message.find("--resv-ports=4"), std::string::npos) << few.error().message;
    EXPECT_NE(few.error().message.find("12000-12001"), std::string::npos);
    EXPECT_TRUE(choose_port_block(in, opts_of("ports=2")).ok());
    in.resv_ports = "12000,12002-12010";  // not consecutive from the first
    EXPECT_FALSE(choose_port_block(in, opts_of("ports=4")).ok());
    in.resv_ports = "junk";
    EXPECT_FALSE(choose_port_block(in, {}).ok());
}

TEST(PortBlock, ExportedAsSlurmDdpPorts) {
    auto f = facts_of(task(0, 0, 0, 2, "n[1-2]", 2, "1(x2)", "n1"));
    auto e = derive_launch_env(f, opts_of("port=29500,ports=6"), {});
    ASSERT_TRUE(e.ok());
    EXPECT_EQ(as_map(e->vars)["SLURM_DDP_PORTS"], "29500-29505");
    EXPECT_EQ(as_map(e->vars)["MASTER_PORT"], "29500");
}

// ---- launcher --------------------------------------------------------------------------------

TEST(Launcher, TorchrunVariablesAndNoPerRankOnes) {
    auto f = facts_of(task(1, 0, 1, 2, "n[1-2]", 2, "1(x2)", "n2"));
    auto o = opts_of("launcher,port=29500");
    auto e = derive_launch_env(f, o, {});
    ASSERT_TRUE(e.ok());
    auto l = derive_launcher_env(f, *e, o, 4u);
    ASSERT_TRUE(l.ok()) << l.error().message;
    auto m = as_map(l->vars);
    EXPECT_EQ(m["PET_NNODES"], "2");
    EXPECT_EQ(m["PET_NODE_RANK"], "1");
    EXPECT_EQ(m["PET_NPROC_PER_NODE"], "4");
    EXPECT_EQ(l->nproc_source, "gpus");
    EXPECT_EQ(m["PET_MASTER_ADDR"], "n1");
    EXPECT_EQ(m["PET_MASTER_PORT"], "29500");
    EXPECT_EQ(m["PET_RDZV_BACKEND"], "static");
    EXPECT_EQ(m["SLURM_DDP_NUM_PROCESSES"], "8");
    for (const auto& name : launcher_omitted_names()) EXPECT_EQ(m.count(name), 0u) << name;
    EXPECT_EQ(m["MASTER_ADDR"], "n1");

    auto o3 = opts_of("launcher,nproc=3");
    auto l3 = derive_launcher_env(f, *e, o3, 4u);
    EXPECT_EQ(as_map(l3->vars)["PET_NPROC_PER_NODE"], "3");
    auto l1 = derive_launcher_env(f, *e, o, std::nullopt);
    EXPECT_EQ(as_map(l1->vars)["PET_NPROC_PER_NODE"], "1");
}

TEST(Launcher, RefusedWithTwoTasksOnANode) {
    auto f = facts_of(task(0, 0, 0, 3, "n[1-2]", 2, "1,2", "n1"));
    auto o = opts_of("launcher");
    auto e = derive_launch_env(f, o, {});
    ASSERT_TRUE(e.ok());
    auto l = derive_launcher_env(f, *e, o, std::nullopt);
    ASSERT_FALSE(l.ok());
    EXPECT_NE(l.error().message.find("'n2' runs 2 tasks"), std::string::npos) << l.error().message;
    EXPECT_NE(l.error().message.find("--ntasks-per-node=1"), std::string::npos);
}

TEST(Launcher, GivesTheLauncherAllStepGpus) {
    EXPECT_EQ(
        as_map(launcher_gpu_env(std::string("0,1,2,3"), std::string("0")))["CUDA_VISIBLE_DEVICES"],
        "0,1,2,3");
    EXPECT_TRUE(launcher_gpu_env(std::string("0,1"), std::string("0,1")).empty());
    EXPECT_TRUE(launcher_gpu_env(std::nullopt, std::string("0")).empty());
}

// ---- torchelastic and worker defaults ----------------------------------------------------------

TEST(FrameworkEnv, TorchelasticMarkers) {
    auto f = facts_of(task(0, 0, 0, 1, "n1", 1, "1", "n1"));
    auto t = torchelastic_env(f, std::string("2"));
    ASSERT_TRUE(t.ok());
    auto m = as_map(*t);
    EXPECT_EQ(m["TORCHELASTIC_RUN_ID"], "1234.3");
    EXPECT_EQ(m["TORCHELASTIC_RESTART_COUNT"], "2");
    EXPECT_EQ(m["TORCHELASTIC_MAX_RESTARTS"], "0");
    EXPECT_EQ(m.count("TORCHELASTIC_USE_AGENT_STORE"), 0u);
    EXPECT_EQ(as_map(*torchelastic_env(f, std::nullopt))["TORCHELASTIC_RESTART_COUNT"], "0");
    auto bad = torchelastic_env(f, std::string("x"));
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("SLURM_RESTART_COUNT='x'"), std::string::npos);
}

TEST(FrameworkEnv, WorkerDefaultsUnlessTheUserSetEither) {
    auto m = as_map(worker_default_env(map_env({})));
    EXPECT_EQ(m["TORCH_NCCL_ASYNC_ERROR_HANDLING"], "1");
    EXPECT_EQ(m["NCCL_ASYNC_ERROR_HANDLING"], "1");
    EXPECT_TRUE(worker_default_env(map_env({{"NCCL_ASYNC_ERROR_HANDLING", "0"}})).empty());
    EXPECT_TRUE(worker_default_env(map_env({{"TORCH_NCCL_ASYNC_ERROR_HANDLING", "3"}})).empty());
}

// ---- debug -----------------------------------------------------------------------------------

TEST(DebugEnv, OneDirectoryPerStep) {
    auto f = facts_of(task(5, 1, 1, 8, "n[1-2]", 2, "4(x2)", "n2"));
    auto d = derive_debug_env(opts_of("debug"), f, std::string("/home/u/run/"), 5u);
    ASSERT_TRUE(d.ok()) << d.error().message;
    EXPECT_EQ(d->dir, "/home/u/run/slurm-ddp-debug/1234.3");
    auto m = as_map(d->vars);
    EXPECT_EQ(m["NCCL_DEBUG"], "INFO");
    EXPECT_EQ(m["NCCL_DEBUG_FILE"], "/home/u/run/slurm-ddp-debug/1234.3/nccl.rank5.log");
    EXPECT_EQ(m["TORCH_DISTRIBUTED_DEBUG"], "DETAIL");
    EXPECT_EQ(m["TORCH_NCCL_DUMP_ON_TIMEOUT"], "1");
    EXPECT_EQ(m["TORCH_NCCL_DEBUG_INFO_TEMP_FILE"],
              "/home/u/run/slurm-ddp-debug/1234.3/nccl_trace_rank_");
    EXPECT_EQ(m[contract::kDebugDirVar], "/home/u/run/slurm-ddp-debug/1234.3");
    for (const auto& v : d->vars) EXPECT_TRUE(v.keep_existing) << v.name;

    auto abs = derive_debug_env(opts_of("debug=/scratch/x/"), f, std::nullopt, std::nullopt);
    ASSERT_TRUE(abs.ok());
    EXPECT_EQ(abs->dir, "/scratch/x/1234.3");
    EXPECT_EQ(as_map(abs->vars)["NCCL_DEBUG_FILE"], "/scratch/x/1234.3/nccl.node1.%p.log");
    auto rel = derive_debug_env(opts_of("debug=dbg"), f, std::nullopt, 5u);
    ASSERT_FALSE(rel.ok());
    EXPECT_NE(rel.error().message.find("SLURM_SUBMIT_DIR"), std::string::npos);
}

// ---- net hints -------------------------------------------------------------------------------

TEST(NetHints, PeerAndInterface) {
    auto f1 = facts_of(task(0, 0, 0, 2, "n[1-2]", 2, "1(x2)", "n1"));
    auto f2 = facts_of(task(1, 0, 1, 2, "n[1-2]", 2, "1(x2)", "n2"));
    auto e1 = derive_launch_env(f1, {}, {});
    auto e2 = derive_launch_env(f2, {}, {});
    EXPECT_EQ(net_hint_peer(f1, *e1), "n2");  // the master's node asks for another node
    EXPECT_EQ(net_hint_peer(f2, *e2), "n1");
    auto single = facts_of(task(0, 0, 0, 1, "n1", 1, "1", "n1"));
    EXPECT_FALSE(net_hint_peer(single, *derive_launch_env(single, {}, {})).has_value());

    const std::vector<InterfaceAddress> ifs{
        {"lo", "127.0.0.1", true}, {"eth0", "10.0.0.5", false}, {"ib0", "10.1.0.5", false}};
    EXPECT_EQ(interface_for_address(ifs, "10.0.0.5"), "eth0");
    EXPECT_EQ(interface_for_address(ifs, "10.1.0.5"), "ib0");
    EXPECT_FALSE(interface_for_address(ifs, "127.0.0.1").has_value());
    EXPECT_FALSE(interface_for_address(ifs, "10.9.9.9").has_value());
    auto g = gloo_hint_env(std::string("eth0"));
    ASSERT_EQ(g.size(), 1u);
    EXPECT_EQ(g[0].name, "GLOO_SOCKET_IFNAME");
    EXPECT_TRUE(g[0].keep_existing);
}

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

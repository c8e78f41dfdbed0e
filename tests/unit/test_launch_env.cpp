// SPDX-License-Identifier: Apache-2.0
// derive_launch_env and read_step_facts: the mapping from Slurm's variables to torchrun's.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <set>
#include <tuple>

#include "core/slurm/step_facts.hpp"
#include "core/task/launch_env.hpp"
#include "step_vars.hpp"

using namespace sddp;
using sddp::unit::Vars;

namespace {

std::map<std::string, std::string> as_map(const LaunchEnv& e) {
    std::map<std::string, std::string> m;
    for (const auto& v : e.vars) m[v.name] = v.value;
    return m;
}

Result<LaunchEnv> derive(const Vars& vars, const StepOptions& opts = {},
                         const LaunchContext& ctx = {}) {
    auto facts = read_step_facts(map_env(vars));
    if (!facts) return facts.take_error();
    return derive_launch_env(*facts, opts, ctx);
}

}  // namespace

TEST(LaunchEnv, TwoNodesFourTasksEach) {
    // rank 6 = node 1, local 2 of `srun -N2 --ntasks-per-node=4`
    auto e = derive(sddp::unit::task(6, 2, 1, 8, "gpu[007-008]", 2, "4(x2)", "gpu008"));
    ASSERT_TRUE(e.ok()) << e.error().message;
    auto m = as_map(*e);
    EXPECT_EQ(m["MASTER_ADDR"], "gpu007");
    EXPECT_EQ(m["RANK"], "6");
    EXPECT_EQ(m["LOCAL_RANK"], "2");
    EXPECT_EQ(m["WORLD_SIZE"], "8");
    EXPECT_EQ(m["LOCAL_WORLD_SIZE"], "4");
    EXPECT_EQ(m["NODE_RANK"], "1");
    EXPECT_EQ(m["GROUP_RANK"], "1");
    EXPECT_EQ(m["GROUP_WORLD_SIZE"], "2");
    EXPECT_EQ(m["NNODES"], "2");
    EXPECT_EQ(m["ROLE_RANK"], "6");
    EXPECT_EQ(m["ROLE_WORLD_SIZE"], "8");
    EXPECT_EQ(m["SLURM_DDP_STEP"], "1234.3");
    EXPECT_FALSE(m["MASTER_PORT"].empty());
    for (const auto& [k, v] : m) EXPECT_EQ(k.rfind("TORCHELASTIC", 0), std::string::npos) << k;
}

TEST(LaunchEnv, UnevenLayoutGivesPerNodeLocalWorldSize) {
    // srun -n5 -N2: 3 tasks on the first node, 2 on the second.
    auto first = derive(sddp::unit::task(0, 0, 0, 5, "n[1-2]", 2, "3,2", "n1"));
    auto second = derive(sddp::unit::task(4, 1, 1, 5, "n[1-2]", 2, "3,2", "n2"));
    ASSERT_TRUE(first.ok() && second.ok());
    EXPECT_EQ(as_map(*first)["LOCAL_WORLD_SIZE"], "3");
    EXPECT_EQ(as_map(*second)["LOCAL_WORLD_SIZE"], "2");
    EXPECT_EQ(as_map(*first)["MASTER_PORT"], as_map(*second)["MASTER_PORT"]);
}

TEST(LaunchEnv, AllTasksOfAStepAgreeOnMaster) {
    std::set<std::string> addrs, ports;
    for (std::uint32_t r = 0; r < 12; ++r) {
        auto e = derive(sddp::unit::task(r, r % 4, r / 4, 12, "rack[1-3]-n01", 3, "4(x3)",
                                         "rack" + std::to_string(r / 4 + 1) + "-n01"));
        ASSERT_TRUE(e.ok()) << e.error().message;
        addrs.insert(e->master_addr);
        ports.insert(std::to_string(e->master_port));
    }
    EXPECT_EQ(addrs, std::set<std::string>{"rack1-n01"});
    EXPECT_EQ(ports.size(), 1u);
}

TEST(LaunchEnv, UserExportedMasterIsKeptUnlessOverride) {
    LaunchContext ctx;
    ctx.user_master_addr = "10.1.2.3";
    ctx.user_master_port = "29555";
    auto v = sddp::unit::task(1, 1, 0, 2, "n1", 1, "2", "n1");
    auto kept = derive(v, {}, ctx);
    ASSERT_TRUE(kept.ok());
    EXPECT_EQ(kept->master_addr, "10.1.2.3");
    EXPECT_EQ(kept->master_port, 29555);
    EXPECT_EQ(kept->port_source, PortSource::user);
    StepOptions o;
    o.override_env = true;
    auto replaced = derive(v, o, ctx);
    ASSERT_TRUE(replaced.ok());
    EXPECT_EQ(replaced->master_addr, "n1");
    EXPECT_NE(replaced->master_port, 29555);
    ctx.user_master_port = "lots";
    auto bad = derive(v, {}, ctx);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("lots"), std::string::npos);
}

TEST(LaunchEnv, AddressOptions) {
    auto v = sddp::unit::task(0, 0, 0, 2, "n[1-2]", 2, "1(x2)", "n1");
    StepOptions suffix;
    suffix.addr_suffix = "-ib";
    EXPECT_EQ(derive(v, suffix)->master_addr, "n1-ib");
    StepOptions literal;
    literal.addr = "fabric0";
    EXPECT_EQ(derive(v, literal)->master_addr, "fabric0");
}

TEST(LaunchEnv, ArbitraryDistributionUsesHostFile) {
    auto v = sddp::unit::task(1, 0, 0, 2, "n[1-2]", 2, "1(x2)", "n1");
    v["SLURM_DISTRIBUTION"] = "arbitrary";
    v["SLURM_HOSTFILE"] = "/nonexistent/hosts";
    auto missing = derive(v);
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().message.find("SLURM_HOSTFILE"), std::string::npos);
    EXPECT_NE(missing.error().message.find("--ddp=addr="), std::string::npos);
    LaunchContext ctx;
    ctx.hostfile_text = "# layout\n\n n2 \nn1\n";
    auto e = derive(v, {}, ctx);
    ASSERT_TRUE(e.ok()) << e.error().message;
    EXPECT_EQ(e->master_addr, "n2");
    EXPECT_EQ(e->addr_source, AddrSource::hostfile);
}

TEST(LaunchEnv, ArbitraryHostFileWithCounts) {
    // SLURM_HOSTFILE "n2*2\nn1": ranks 0,1 on n2, rank 2 on n1 (measured: Slurm's own syntax).
    auto v = sddp::unit::task(2, 0, 0, 3, "n[1-2]", 2, "1,2", "n1");
    v["SLURM_DISTRIBUTION"] = "arbitrary";
    v["SLURM_HOSTFILE"] = "/shared/hosts";
    LaunchContext ctx;
    ctx.hostfile_text = "n2*2\nn1\n";
    auto e = derive(v, {}, ctx);
    ASSERT_TRUE(e.ok()) << e.error().message;
    EXPECT_EQ(e->master_addr, "n2");
    EXPECT_EQ(e->local_world_size, 1u);
}

TEST(LaunchEnv, ArbitraryHostFileIgnoredBySlurmIsRefused) {
    // srun -w n2,n1,n1 --distribution=arbitrary with a stale SLURM_HOSTFILE "n1\nn2": Slurm placed
    // rank 0 on n2 and ranks 1,2 on n1 and still exported the file. Never MASTER_ADDR=n1.
    LaunchContext stale;
    stale.hostfile_text = "n1\nn2\n";
    for (auto [rank, local, node, name] :
         {std::tuple{0u, 0u, 1u, "n2"}, std::tuple{1u, 0u, 0u, "n1"},
          std::tuple{2u, 1u, 0u, "n1"}}) {
        auto v = sddp::unit::task(rank, local, node, 3, "n[1-2]", 2, "2,1", name);
        v["SLURM_DISTRIBUTION"] = "arbitrary";
        v["SLURM_HOSTFILE"] = "/tmp/hosts";
        auto e = derive(v, {}, stale);
        ASSERT_FALSE(e.ok()) << "rank " << rank << " got MASTER_ADDR=" << e->master_addr;
        EXPECT_NE(e.error().message.find("-w or --nodefile"), std::string::npos);
        EXPECT_NE(e.error().message.find("--ddp=addr=HOST"), std::string::npos);
    }
    // A file with the right counts but another order: the task whose rank moved refuses.
    LaunchContext reordered;
    reordered.hostfile_text = "n1\nn2\nn1\n";
    auto v = sddp::unit::task(0, 0, 1, 3, "n[1-2]", 2, "2,1", "n2");
    v["SLURM_DISTRIBUTION"] = "arbitrary";
    v["SLURM_HOSTFILE"] = "/tmp/hosts";
    auto e = derive(v, {}, reordered);
    ASSERT_FALSE(e.ok());
    EXPECT_NE(e.error().message.find("puts rank 0 on 'n1' but it runs on 'n2'"), std::string::npos)
        << e.error().message;
    // No file at all (-w without SLURM_HOSTFILE): a refusal naming the fix.
    v.erase("SLURM_HOSTFILE");
    auto none = derive(v);
    ASSERT_FALSE(none.ok());
    EXPECT_NE(none.error().message.find("--ddp=addr=HOST"), std::string::npos);
}

TEST(LaunchEnv, UnreadableHostFileSaysWhy) {
    auto v = sddp::unit::task(1, 0, 0, 2, "n[1-2]", 2, "1(x2)", "n1");
    v["SLURM_DISTRIBUTION"] = "arbitrary";
    v["SLURM_HOSTFILE"] = "/tmp/fifo";
    LaunchContext ctx;
    ctx.hostfile_problem = "is not a regular file";
    auto e = derive(v, {}, ctx);
    ASSERT_FALSE(e.ok());
    EXPECT_NE(e.error().message.find("'/tmp/fifo', which is not a regular file on node 'n1'"),
              std::string::npos)
        << e.error().message;
}

// srun --het-group=0,1 in `salloc -w n2 -n2 : -w n1 -n1`, as measured on the local cluster:
// the step's lists are sorted (n1 first) but SLURM_NODEID follows the components (n2 is 0).
namespace {
Vars het_task(std::uint32_t procid, std::uint32_t localid, std::uint32_t nodeid,
              const std::string& name) {
    auto v = sddp::unit::task(procid, localid, nodeid, 3, "n[1-2]", 2, "1,2", name);
    v["SLURM_DISTRIBUTION"] = "cyclic";
    v["SLURM_HET_SIZE"] = "2";
    v["SLURM_NODELIST_HET_GROUP_0"] = "n2";
    v["SLURM_NODELIST_HET_GROUP_1"] = "n1";
    return v;
}
}  // namespace

TEST(LaunchEnv, HeterogeneousComponentsOutOfNodeOrder) {
    for (auto [rank, local, node, name, lws] :
         {std::tuple{0u, 0u, 0u, "n2", 2u}, std::tuple{1u, 1u, 0u, "n2", 2u},
          std::tuple{2u, 0u, 1u, "n1", 1u}}) {
        auto e = derive(het_task(rank, local, node, name));
        ASSERT_TRUE(e.ok()) << "rank " << rank << ": " << e.error().message;
        EXPECT_EQ(e->rank, rank);
        EXPECT_EQ(e->master_addr, "n2") << "rank " << rank;
        EXPECT_EQ(e->local_world_size, lws) << "rank " << rank;
        EXPECT_EQ(e->node_rank, node) << "rank " << rank;
    }
    // A step of component 1 alone: its own node.
    auto v = sddp::unit::task(0, 0, 0, 1, "n1", 1, "1", "n1");
    v["SLURM_HET_SIZE"] = "2";
    v["SLURM_NODELIST_HET_GROUP_0"] = "n2";
    v["SLURM_NODELIST_HET_GROUP_1"] = "n1";
    auto one = derive(v);
    ASSERT_TRUE(one.ok()) << one.error().message;
    EXPECT_EQ(one->master_addr, "n1");
    // Components that do not explain SLURM_NODEID: a refusal, not a guess.
    auto bad = het_task(2, 0, 0, "n1");
    auto e = derive(bad);
    ASSERT_FALSE(e.ok());
    EXPECT_NE(e.error().message.find("--ddp=addr=HOST"), std::string::npos);
}

// The same step from a job script: sbatch exports the components' lists only as
// SLURM_JOB_NODELIST_HET_GROUP_<i>.
TEST(LaunchEnv, HeterogeneousComponentsFromSbatch) {
    for (auto [rank, local, node, name] :
         {std::tuple{0u, 0u, 0u, "n2"}, std::tuple{2u, 0u, 1u, "n1"}}) {
        auto v = het_task(rank, local, node, name);
        v.erase("SLURM_NODELIST_HET_GROUP_0");
        v.erase("SLURM_NODELIST_HET_GROUP_1");
        v["SLURM_JOB_NODELIST_HET_GROUP_0"] = "n2";
        v["SLURM_JOB_NODELIST_HET_GROUP_1"] = "n1";
        auto e = derive(v);
        ASSERT_TRUE(e.ok()) << "rank " << rank << ": " << e.error().message;
        EXPECT_EQ(e->master_addr, "n2") << "rank " << rank;
        EXPECT_EQ(e->node_rank, node) << "rank " << rank;
    }
}

TEST(LaunchEnv, PlaneAsSlurmSpellsIt) {
    // srun -N2 -n5 -m plane=2 (measured): ranks 0,1 on n1, 2 on n2, 3,4 on n1.
    auto v = sddp::unit::task(2, 0, 1, 5, "n[1-2]", 2, "4,1", "n2");
    v["SLURM_DISTRIBUTION"] = "plane";
    v["SLURM_DIST_PLANESIZE"] = "2";
    auto facts = read_step_facts(map_env(v));
    ASSERT_TRUE(facts.ok()) << facts.error().message;
    auto layout = ranks_per_node(*facts);
    ASSERT_TRUE(layout.ok()) << layout.error().message;
    EXPECT_EQ((*layout)[0], (std::vector<std::uint32_t>{0, 1, 3, 4}));
    EXPECT_EQ((*layout)[1], (std::vector<std::uint32_t>{2}));
    v.erase("SLURM_DIST_PLANESIZE");
    EXPECT_FALSE(ranks_per_node(*read_step_facts(map_env(v))).ok());
}

TEST(LaunchEnv, RankZeroOnAnotherHostIsAnError) {
    // Rank 0 claims node n2 while the nodelist starts with n1: never hand out a wrong master.
    auto e = derive(sddp::unit::task(0, 0, 0, 2, "n[1-2]", 2, "1(x2)", "n2"));
    ASSERT_FALSE(e.ok());
    EXPECT_NE(e.error().message.find("n2"), std::string::npos);
}

TEST(LaunchEnv, TimeoutOptionIsExported) {
    StepOptions o;
    o.timeout_s = 42;
    auto e = derive(sddp::unit::task(0, 0, 0, 1, "n1", 1, "1", "n1"), o);
    EXPECT_EQ(as_map(*e)["SLURM_DDP_TIMEOUT"], "42");
}

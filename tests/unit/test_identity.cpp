// SPDX-License-Identifier: Apache-2.0
// detect_identity: each source (ddp, slurm, mpi, single) and each malformed case.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>

#include "core/task/identity.hpp"

using namespace sddp;

namespace {

using Vars = std::map<std::string, std::string, std::less<>>;

Result<Identity> detect(const Vars& v, const IdentityInputs& in = {}) {
    return detect_identity(map_env(v), in);
}

// The message must name the variable and its value: the user has to find and fix it.
void expect_error(const Vars& v, Errc code, std::initializer_list<const char*> mentions) {
    auto id = detect(v);
    ASSERT_FALSE(id.ok()) << "expected an error";
    EXPECT_EQ(id.error().code, code) << id.error().message;
    for (const char* m : mentions) {
        EXPECT_NE(id.error().message.find(m), std::string::npos)
            << "'" << m << "' not in: " << id.error().message;
    }
}

Vars slurm_task(std::uint32_t procid, std::uint32_t localid, std::uint32_t nodeid,
                const std::string& nodename) {
    return Vars{{"SLURM_JOB_ID", "77"},
                {"SLURM_STEP_ID", "2"},
                {"SLURM_PROCID", std::to_string(procid)},
                {"SLURM_LOCALID", std::to_string(localid)},
                {"SLURM_NODEID", std::to_string(nodeid)},
                {"SLURM_STEP_NUM_TASKS", "8"},
                {"SLURM_STEP_NUM_NODES", "2"},
                {"SLURM_STEP_NODELIST", "n[1-2]"},
                {"SLURM_STEP_TASKS_PER_NODE", "4(x2)"},
                {"SLURMD_NODENAME", nodename},
                {"SLURM_DISTRIBUTION", "block"}};
}

const std::string kSecretHex(64, 'a');

}  // namespace

// ---- ddp: srun --ddp / torchrun -------------------------------------------------------

TEST(Identity, DdpFull) {
    auto id = detect({{"RANK", "5"},
                      {"WORLD_SIZE", "8"},
                      {"LOCAL_RANK", "1"},
                      {"LOCAL_WORLD_SIZE", "4"},
                      {"NODE_RANK", "1"},
                      {"GROUP_RANK", "1"},
                      {"NNODES", "2"},
                      {"MASTER_ADDR", "n1"},
                      {"MASTER_PORT", "29500"},
                      {"SLURM_DDP_STEP", "77.2"},
                      {"SLURM_DDP_SECRET", kSecretHex},
                      {"SLURM_DDP_DEVICE", "0"}});
    ASSERT_TRUE(id.ok()) << id.error().message;
    EXPECT_EQ(id->source, IdentitySource::ddp);
    EXPECT_EQ(id->rank, 5u);
    EXPECT_EQ(id->world_size, 8u);
    EXPECT_TRUE(id->locality_known);
    EXPECT_EQ(id->local_rank, 1u);
    EXPECT_EQ(id->local_world_size, 4u);
    EXPECT_EQ(id->node_rank, 1u);
    EXPECT_EQ(id->num_nodes, 2u);
    EXPECT_EQ(id->master_addr, "n1");
    EXPECT_EQ(id->master_port, 29500);
    EXPECT_EQ(id->step_tag, "77.2");
    EXPECT_EQ(id->secret, std::string(32, '\xaa'));
    EXPECT_EQ(id->device, 0);
}

TEST(Identity, DdpBareRankAndWorldSizeLeavesLocalityUnknown) {
    auto id = detect({{"RANK", "1"}, {"WORLD_SIZE", "2"}});
    ASSERT_TRUE(id.ok()) << id.error().message;
    EXPECT_FALSE(id->locality_known);
    EXPECT_EQ(id->local_rank, 0u);
    EXPECT_EQ(id->local_world_size, 1u);
    EXPECT_FALSE(id->node_rank.has_value());
    EXPECT_FALSE(id->master_addr.has_value());
    EXPECT_FALSE(id->master_port.has_value());
}

TEST(Identity, DdpWinsOverSlurm) {
    auto v = slurm_task(3, 3, 0, "n1");
    v["RANK"] = "3";
    v["WORLD_SIZE"] = "8";
    auto id = detect(v);
    ASSERT_TRUE(id.ok()) << id.error().message;
    EXPECT_EQ(id->source, IdentitySource::ddp);
}

TEST(Identity, OptionsOverrideMasterFromEnv) {
    IdentityInputs in;
    in.master_addr = "opt-host";
    in.master_port = 1234;
    auto id = detect(
        {{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "env"}, {"MASTER_PORT", "99"}}, in);
    ASSERT_TRUE(id.ok()) << id.error().message;
    EXPECT_EQ(id->master_addr, "opt-host");
    EXPECT_EQ(id->master_port, 1234);
}

TEST(Identity, RankWithoutWorldSize) {
    expect_error({{"RANK", "3"}}, Errc::missing_input, {"RANK='3'", "WORLD_SIZE"});
}

TEST(Identity, WorldSizeWithoutRank) {
    expect_error({{"WORLD_SIZE", "3"}}, Errc::missing_input, {"WORLD_SIZE='3'", "RANK is"});
}

TEST(Identity, LocalRankAlone) {
    expect_error({{"LOCAL_RANK", "0"}}, Errc::missing_input,
                 {"LOCAL_RANK='0'", "RANK and WORLD_SIZE"});
}

TEST(Identity, RankNotBelowWorldSize) {
    expect_error({{"RANK", "5"}, {"WORLD_SIZE", "2"}}, Errc::invalid_input,
                 {"RANK=5", "WORLD_SIZE=2"});
}

TEST(Identity, WorldSizeZero) {
    expect_error({{"RANK", "0"}, {"WORLD_SIZE", "0"}}, Errc::invalid_input, {"WORLD_SIZE=0"});
}

TEST(Identity, NonNumericRank) {
    expect_error({{"RANK", "one"}, {"WORLD_SIZE", "2"}}, Errc::invalid_input,
                 {"RANK='one'", "not a non-negative integer"});
}

TEST(Identity, NegativeWorldSize) {
    expect_error({{"RANK", "0"}, {"WORLD_SIZE", "-2"}}, Errc::invalid_input, {"WORLD_SIZE='-2'"});
}

TEST(Identity, EmptyRankIsMalformedNotZero) {
    expect_error({{"RANK", ""}, {"WORLD_SIZE", "2"}}, Errc::invalid_input, {"RANK=''"});
}

TEST(Identity, LocalRankWithoutLocalWorldSize) {
    expect_error({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "1"}}, Errc::missing_input,
                 {"LOCAL_RANK='1'", "LOCAL_WORLD_SIZE"});
}

TEST(Identity, LocalRankNotBelowLocalWorldSize) {
    expect_error(
        {{"RANK", "1"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "2"}, {"LOCAL_WORLD_SIZE", "2"}},
        Errc::invalid_input, {"LOCAL_RANK=2", "LOCAL_WORLD_SIZE=2"});
}

TEST(Identity, LocalWorldSizeAboveWorldSize) {
    expect_error(
        {{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "4"}},
        Errc::invalid_input, {"LOCAL_WORLD_SIZE=4", "world size 2"});
}

TEST(Identity, NodeRankAndGroupRankDisagree) {
    expect_error({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"NODE_RANK", "0"}, {"GROUP_RANK", "1"}},
                 Errc::invalid_input, {"NODE_RANK=0", "GROUP_RANK=1"});
}

TEST(Identity, NodeRankNotBelowNnodes) {
    expect_error({{"RANK", "1"}, {"WORLD_SIZE", "4"}, {"NODE_RANK", "2"}, {"NNODES", "2"}},
                 Errc::invalid_input, {"NODE_RANK=2", "NNODES=2"});
}

TEST(Identity, BadMasterPort) {
    expect_error({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "70000"}},
                 Errc::invalid_input, {"MASTER_PORT='70000'"});
    expect_error({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "0"}}, Errc::invalid_input,
                 {"MASTER_PORT='0'"});
}

TEST(Identity, BadSecret) {
    expect_error({{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"SLURM_DDP_SECRET", "abc"}},
                 Errc::invalid_input, {"SLURM_DDP_SECRET has 3 characters"});
    expect_error({{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"SLURM_DDP_SECRET", std::string(64, 'g')}},
                 Errc::invalid_input, {"not a hex digit"});
}

TEST(Identity, BadDevice) {
    expect_error({{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"SLURM_DDP_DEVICE", "x"}},
                 Errc::invalid_input, {"SLURM_DDP_DEVICE='x'"});
}

// ---- slurm: plain srun, no plugin ------------------------------------------------------

TEST(Identity, SlurmWithoutPlugin) {
    IdentityInputs in;
    auto id = detect(slurm_task(6, 2, 1, "n2"), in);
    ASSERT_TRUE(id.ok()) << id.error().message;
    EXPECT_EQ(id->source, IdentitySource::slurm);
    EXPECT_EQ(id->rank, 6u);
    EXPECT_EQ(id->world_size, 8u);
    EXPECT_EQ(id->local_rank, 2u);
    EXPECT_EQ(id->local_world_size, 4u);
    EXPECT_EQ(id->node_rank, 1u);
    EXPECT_EQ(id->num_nodes, 2u);
    EXPECT_EQ(id->master_addr, "n1");
    ASSERT_TRUE(id->master_port.has_value());
    EXPECT_GE(*id->master_port, 20000);  // the plugin's derived port range
    EXPECT_LE(*id->master_port, 29999);
    EXPECT_EQ(id->step_tag, "77.2");
    // Every rank derives the same port, as the plugin would.
    auto other = detect(slurm_task(0, 0, 0, "n1"), in);
    ASSERT_TRUE(other.ok()) << other.error().message;
    EXPECT_EQ(other->master_port, id->master_port);
}

TEST(Identity, SlurmUserMasterPortWins) {
    auto v = slurm_task(1, 1, 0, "n1");
    v["MASTER_PORT"] = "4242";
    auto id = detect(v);
    ASSERT_TRUE(id.ok()) << id.error().message;
    EXPECT_EQ(id->master_port, 4242);
}

TEST(Identity, SlurmInconsistentIsAnError) {
    auto v = slurm_task(9, 1, 1, "n2");  // SLURM_PROCID=9 of 8 tasks
    expect_error(v, Errc::invalid_input, {"SLURM_PROCID=9", "Slurm's task variables"});
}

TEST(Identity, SlurmBatchStepIsSingleProcess) {
    // The batch script: SLURM_PROCID=0 in step "batch" (0xfffffffb), not a parallel step.
    auto id =
        detect({{"SLURM_JOB_ID", "77"}, {"SLURM_STEP_ID", "4294967291"}, {"SLURM_PROCID", "0"}});
    ASSERT_TRUE(id.ok()) << id.error().message;
    EXPECT_EQ(id->source, IdentitySource::single);
}

TEST(Identity, SlurmWithAgreeingPmiUsesSlurm) {
    auto v = slurm_task(6, 2, 1, "n2");  // srun --mpi=pmi2
    v["PMI_RANK"] = "6";
    v["PMI_SIZE"] = "8";
    auto id = detect(v);
    ASSERT_TRUE(id.ok()) << id.error().message;
    EXPECT_EQ(id->source, IdentitySource::slurm);
    EXPECT_TRUE(id->locality_known);
}

TEST(Identity, MpirunInsideSlurmUsesMpi) {
    // mpirun's daemons run as a Slurm step of one task per node; ranks inherit the daemon's ids.
    Vars v{{"SLURM_JOB_ID", "77"},
           {"SLURM_STEP_ID", "0"},
           {"SLURM_PROCID", "1"},
           {"SLURM_LOCALID", "0"},
           {"SLURM_NODEID", "1"},
           {"SLURM_STEP_NUM_TASKS", "2"},
           {"SLURM_STEP_NUM_NODES", "2"},
           {"SLURM_STEP_NODELIST", "n[1-2]"},
           {"SLURM_STEP_TASKS_PER_NODE", "1(x2)"},
           {"SLURMD_NODENAME", "n2"},
           {"OMPI_COMM_WORLD_RANK", "5"},
           {"OMPI_COMM_WORLD_SIZE", "8"},
           {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
           {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
           {"MASTER_ADDR", "n1"},
           {"MASTER_PORT", "29500"}};
    auto id = detect(v);
    ASSERT_TRUE(id.ok()) << id.error().message;
    EXPECT_EQ(id->source, IdentitySource::mpi);
    EXPECT_EQ(id->rank, 5u);
    EXPECT_EQ(id->world_size, 8u);
    EXPECT_EQ(id->master_addr, "n1");
}

// ---- mpi: Open MPI, PMI ----------------------------------------------------------------

TEST(Identity, OpenMpi) {
    auto id = detect({{"OMPI_COMM_WORLD_RANK", "3"},
                      {"OMPI_COMM_WORLD_SIZE", "4"},
                      {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                      {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
                      {"OMPI_COMM_WORLD_NODE_RANK", "1"}});
    ASSERT_TRUE(id.ok()) << id.error().message;
    EXPECT_EQ(id->source, IdentitySource::mpi);
    EXPECT_EQ(id->rank, 3u);
    EXPECT_EQ(id->world_size, 4u);
    EXPECT_EQ(id->local_rank, 1u);
    EXPECT_EQ(id->local_world_size, 2u);
    EXPECT_FALSE(id->node_rank.has_value());  // OMPI's NODE_RANK is not a node index
    EXPECT_FALSE(id->master_addr.has_value());
}

TEST(Identity, OpenMpiPartial) {
    expect_error({{"OMPI_COMM_WORLD_RANK", "3"}}, Errc::missing_input,
                 {"OMPI_COMM_WORLD_RANK='3'", "OMPI_COMM_WORLD_SIZE"});
}

TEST(Identity, OpenMpiRankTooLarge) {
    expect_error({{"OMPI_COMM_WORLD_RANK", "4"}, {"OMPI_COMM_WORLD_SIZE", "4"}},
                 Errc::invalid_input, {"OMPI_COMM_WORLD_RANK=4", "OMPI_COMM_WORLD_SIZE=4"});
}

TEST(Identity, Pmi) {
    auto id = detect({{"PMI_RANK", "2"}, {"PMI_SIZE", "3"}, {"PMI_JOBID", "77.4"}});
    ASSERT_TRUE(id.ok()) << id.error().message;
    EXPECT_EQ(id->source, IdentitySource::mpi);
    EXPECT_EQ(id->rank, 2u);
    EXPECT_EQ(id->world_size, 3u);
    EXPECT_FALSE(id->locality_known);
    EXPECT_EQ(id->step_tag, "77.4");
}

TEST(Identity, PmiNonNumeric) {
    expect_error({{"PMI_RANK", "2x"}, {"PMI_SIZE", "3"}}, Errc::invalid_input, {"PMI_RANK='2x'"});
}

// ---- single ----------------------------------------------------------------------------

TEST(Identity, SingleProcess) {
    auto id = detect({});
    ASSERT_TRUE(id.ok()) << id.error().message;
    EXPECT_EQ(id->source, IdentitySource::single);
    EXPECT_EQ(id->rank, 0u);
    EXPECT_EQ(id->world_size, 1u);
    EXPECT_EQ(id->node_rank, 0u);
    EXPECT_TRUE(id->secret.empty());
}

// ---- timeout ---------------------------------------------------------------------------

TEST(Identity, TimeoutFromEnvironment) {
    auto t = read_timeout_ms(map_env({{"SLURM_DDP_TIMEOUT", "60"}}));
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(*t, 60000u);
    auto unset = read_timeout_ms(map_env({}));
    ASSERT_TRUE(unset.ok());
    EXPECT_FALSE(unset->has_value());
    auto bad = read_timeout_ms(map_env({{"SLURM_DDP_TIMEOUT", "5m"}}));
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("SLURM_DDP_TIMEOUT='5m'"), std::string::npos);
    EXPECT_FALSE(read_timeout_ms(map_env({{"SLURM_DDP_TIMEOUT", "0"}})).ok());
}

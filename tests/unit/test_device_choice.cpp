// SPDX-License-Identifier: Apache-2.0
// Device choice without SLURM_DDP_DEVICE, for every launch layout in the binding table of
// core/gpu/gpu_binding.hpp: each task must use the GPU the plugin's binding would give it.
#include <gtest/gtest.h>

#include <sstream>
#include <vector>

#include "core/gpu/device_choice.hpp"

using namespace sddp;

namespace {

struct Task {
    std::optional<std::string> cvd;  // CUDA_VISIBLE_DEVICES in the task
    std::optional<std::string> sg;   // SLURM_STEP_GPUS (nullopt: same as cvd when on is set)
    std::optional<std::string> on;   // SLURM_GPUS_ON_NODE
};

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    for (std::string item; std::getline(in, item, ',');) out.push_back(item);
    return out;
}

DeviceChoiceInput input(const Task& t, int local_rank, int local_world_size) {
    DeviceChoiceInput in;
    in.local_rank = local_rank;
    in.local_world_size = local_world_size;
    in.slurm.task_visible = t.cvd;
    in.slurm.task_ordinal = t.on ? t.cvd : std::nullopt;
    in.slurm.task_gpus = t.sg ? t.sg : (t.on ? t.cvd : std::nullopt);
    in.slurm.gpus_on_node = t.on;
    in.device_count = t.cvd ? static_cast<int>(split(*t.cvd).size()) : 4;
    return in;
}

// The GPU (as named in CUDA_VISIBLE_DEVICES) each local rank ends up on.
std::vector<std::string> chosen(const std::vector<Task>& tasks) {
    std::vector<std::string> out;
    const int n = static_cast<int>(tasks.size());
    for (int k = 0; k < n; ++k) {
        auto d = choose_device(input(tasks[static_cast<std::size_t>(k)], k, n));
        if (!d) {
            out.push_back("error: " + d.error().message);
            continue;
        }
        const auto& cvd = tasks[static_cast<std::size_t>(k)].cvd;
        out.push_back(cvd ? split(*cvd)[static_cast<std::size_t>(*d)] : std::to_string(*d));
    }
    return out;
}

using V = std::vector<std::string>;

}  // namespace

TEST(DeviceChoice, GresAllVisibleUsesLocalRank) {  // -n4 --gres=gpu:4
    const Task t{"0,1,2,3", std::nullopt, "4"};
    EXPECT_EQ(chosen({t, t, t, t}), (V{"0", "1", "2", "3"}));
}

TEST(DeviceChoice, GresTwoOfTwo) {  // -n2 --gres=gpu:2
    const Task t{"0,1", std::nullopt, "2"};
    EXPECT_EQ(chosen({t, t}), (V{"0", "1"}));
}

TEST(DeviceChoice, GpusPerTaskOneUsesTheOnlyVisibleDevice) {  // -n4 --gpus-per-task=1 (plain)
    EXPECT_EQ(chosen({{"0", {}, "4"}, {"1", {}, "4"}, {"2", {}, "4"}, {"3", {}, "4"}}),
              (V{"0", "1", "2", "3"}));
    // Every task uses index 0 of its own list, where LOCAL_RANK would be an invalid ordinal.
    for (int k = 0; k < 4; ++k) {
        auto d = choose_device(input({std::to_string(k), {}, "4"}, k, 4));
        ASSERT_TRUE(d) << d.error().message;
        EXPECT_EQ(*d, 0);
    }
}

TEST(DeviceChoice, GpusPerTaskTwoUsesTheFirstOfItsOwn) {  // -n2 --gpus-per-task=2
    EXPECT_EQ(chosen({{"0,1", {}, "4"}, {"2,3", {}, "4"}}), (V{"0", "2"}));
}

TEST(DeviceChoice, GpuBindSingleOne) {  // -n4 --gres=gpu:4 --gpu-bind=single:1
    EXPECT_EQ(chosen({{"0", {}, "4"}, {"1", {}, "4"}, {"2", {}, "4"}, {"3", {}, "4"}}),
              (V{"0", "1", "2", "3"}));
}

TEST(DeviceChoice, GpuBindSingleTwoSharesAndIsRefused) {  // -n3 --gres=gpu:2 --gpu-bind=single:2
    const auto c = chosen({{"0", {}, "2"}, {"0", {}, "2"}, {"1", {}, "2"}});
    for (const auto& s : c) {
        EXPECT_NE(s.find("3 tasks of this step run on this node"), std::string::npos) << s;
        EXPECT_NE(s.find("only 2 GPU(s)"), std::string::npos) << s;
    }
}

TEST(DeviceChoice, MapGpu) {  // --gpu-bind=map_gpu:3,2,1,0
    EXPECT_EQ(chosen({{"3", {}, "4"}, {"2", {}, "4"}, {"1", {}, "4"}, {"0", {}, "4"}}),
              (V{"3", "2", "1", "0"}));
}

TEST(DeviceChoice, GpusPerNodeWithMoreTasksThanGpusIsRefused) {  // -N2 -n4 --gpus-per-node=2
    const Task t{"0,1", std::nullopt, "2"};
    const auto c = chosen({t, t, t});  // n1 holds 3 tasks
    EXPECT_NE(c[2].find("only 2 GPU(s)"), std::string::npos) << c[2];
    EXPECT_EQ(chosen({t}), (V{"0"}));  // n2 holds 1
}

TEST(DeviceChoice, SecondJobGlobalIndices) {  // 2nd job on a node, --gres=gpu:2
    const Task t{"2,3", std::nullopt, "2"};
    EXPECT_EQ(chosen({t, t}), (V{"2", "3"}));
}

TEST(DeviceChoice, SecondJobNarrowed) {  // 2nd job, --gres=gpu:2 --gpus-per-task=1
    EXPECT_EQ(chosen({{"2", {}, "2"}, {"3", {}, "2"}}), (V{"2", "3"}));
}

TEST(DeviceChoice, UuidList) {  // gres.conf with unique ids (MIG): CUDA_VISIBLE_DEVICES holds ids
    // SLURM_STEP_GPUS keeps global indices.
    const Task t{"GPU-aaaa,GPU-bbbb", "0,1", "2"};
    EXPECT_EQ(chosen({t, t}), (V{"GPU-aaaa", "GPU-bbbb"}));
    EXPECT_EQ(chosen({{"MIG-1", "0", "2"}, {"MIG-2", "1", "2"}}), (V{"MIG-1", "MIG-2"}));
}

TEST(DeviceChoice, NoSlurmGpusLocalRankIndexes) {  // torchrun, srun --gres=none
    EXPECT_EQ(chosen({{}, {}, {}}), (V{"0", "1", "2"}));
    // A user's own list (no Slurm GPU variables): LOCAL_RANK indexes it.
    EXPECT_EQ(chosen({{"1,0", {}, {}}, {"1,0", {}, {}}}), (V{"1", "0"}));
}

TEST(DeviceChoice, EmptyVisibleListMeansNoDevice) {
    DeviceChoiceInput in;
    in.slurm.task_visible = "";
    auto d = choose_device(in);
    ASSERT_FALSE(d.ok());
    EXPECT_NE(d.error().message.find("no CUDA device is visible"), std::string::npos);
    EXPECT_NE(d.error().message.find("CUDA_VISIBLE_DEVICES=''"), std::string::npos)
        << d.error().message;
}

TEST(DeviceChoice, SlurmDdpDeviceWins) {
    DeviceChoiceInput in;
    in.local_rank = 3;
    in.local_world_size = 4;
    in.ddp_device = 0;
    in.device_count = 1;
    auto d = choose_device(in);
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(*d, 0);
}

TEST(DeviceChoice, InvalidOrdinalExplained) {
    DeviceChoiceInput in;
    in.local_rank = 2;
    in.local_world_size = 3;
    in.device_count = 2;
    in.slurm.task_visible = "0,1";
    auto d = choose_device(in);
    ASSERT_FALSE(d.ok());
    const auto& m = d.error().message;
    EXPECT_NE(m.find("LOCAL_RANK=2"), std::string::npos) << m;
    EXPECT_NE(m.find("2 CUDA devices"), std::string::npos) << m;
    EXPECT_NE(m.find("CUDA_VISIBLE_DEVICES='0,1'"), std::string::npos) << m;
    EXPECT_NE(m.find("invalid device ordinal"), std::string::npos) << m;
}

TEST(DeviceChoice, NoDevice) {
    DeviceChoiceInput in;
    auto d = choose_device(in);
    ASSERT_FALSE(d.ok());
    EXPECT_NE(d.error().message.find("no CUDA device is visible"), std::string::npos);
    EXPECT_NE(d.error().message.find("CUDA_VISIBLE_DEVICES unset"), std::string::npos);
}

TEST(DeviceChoice, SlurmDdpDeviceOutOfRange) {
    DeviceChoiceInput in;
    in.ddp_device = 1;
    in.device_count = 1;
    auto d = choose_device(in);
    ASSERT_FALSE(d.ok());
    EXPECT_NE(d.error().message.find("SLURM_DDP_DEVICE=1"), std::string::npos);
}

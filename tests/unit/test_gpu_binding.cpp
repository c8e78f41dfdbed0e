// SPDX-License-Identifier: Apache-2.0
// GPU binding rules against the environments Slurm 22.05 really produces (see the table in
// core/gpu/gpu_binding.hpp), one scenario per test.
#include <gtest/gtest.h>

#include "core/gpu/gpu_binding.hpp"

using namespace sddp;

namespace {

using Strings = std::vector<std::string>;

// One task of a step: Slurm's task-level values, and the step-level ones where given.
GpuBindingInput task(int rank, int tasks, std::string visible, std::string gpus,
                     std::string on_node) {
    GpuBindingInput in;
    in.local_rank = rank;
    in.local_world_size = tasks;
    in.slurm.task_visible = visible;
    in.slurm.task_ordinal = visible;
    in.slurm.task_gpus = std::move(gpus);
    in.slurm.gpus_on_node = std::move(on_node);
    return in;
}

GpuBindingInput with_step(GpuBindingInput in, std::string step_visible, std::string step_gpus) {
    in.slurm.step_visible = std::move(step_visible);
    in.slurm.step_gpus = std::move(step_gpus);
    return in;
}

std::string env_of(const GpuBinding& b, const std::string& name) {
    for (const auto& e : b.env)
        if (e.name == name) return e.value + (e.keep_existing ? " (keep)" : "");
    return "<unset>";
}

GpuBinding bind(const GpuBindingInput& in) {
    auto r = bind_gpus(in);
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? r.value() : GpuBinding{};
}

// 2 packages x 4 GPUs, as read from tests/topologies/2pkg-8gpu.xml.
GpuTopologyFacts two_socket_eight_gpus() {
    GpuTopologyFacts f;
    for (int i = 0; i < 8; ++i) {
        GpuFact g;
        g.index = i;
        g.pci_bus_id = "0000:0" + std::to_string(i) + ":00.0";
        g.numa = g.package = i < 4 ? 0 : 1;
        f.gpus.push_back(g);
    }
    return f;
}

}  // namespace

TEST(GpuBindPolicy, NamesComeFromTheOptionTable) {
    EXPECT_STREQ(to_string(GpuBindPolicy::local), "local");
    EXPECT_STREQ(to_string(GpuBindPolicy::single), "single");
    EXPECT_STREQ(to_string(GpuBindPolicy::closest), "closest");
    EXPECT_STREQ(to_string(GpuBindPolicy::none), "none");
}

TEST(GpuBinding, GresAllVisibleLocalUsesLocalRank) {  // srun -n4 --gres=gpu:4
    auto b = bind(task(2, 4, "0,1,2,3", "0,1,2,3", "4"));
    EXPECT_TRUE(b.changed);
    EXPECT_EQ(b.visible, (Strings{"0", "1", "2", "3"}));
    EXPECT_EQ(b.device_index, 2);
    EXPECT_EQ(b.own, "2");
    EXPECT_EQ(env_of(b, "CUDA_VISIBLE_DEVICES"), "0,1,2,3");
    EXPECT_EQ(env_of(b, "GPU_DEVICE_ORDINAL"), "0,1,2,3");
    EXPECT_EQ(env_of(b, "SLURM_DDP_DEVICE"), "2");
    EXPECT_EQ(env_of(b, "CUDA_DEVICE_ORDER"), "PCI_BUS_ID (keep)");
}

TEST(GpuBinding, GresSingleNarrowsToOwn) {
    auto in = task(2, 4, "0,1,2,3", "0,1,2,3", "4");
    in.policy = GpuBindPolicy::single;
    auto b = bind(in);
    EXPECT_EQ(b.visible, (Strings{"2"}));
    EXPECT_EQ(b.device_index, 0);
    EXPECT_EQ(env_of(b, "SLURM_DDP_DEVICE"), "0");
}

TEST(GpuBinding, FewerTasksThanGpusIsFine) {  // srun -n2 --gres=gpu:4
    auto b = bind(task(1, 2, "0,1,2,3", "0,1,2,3", "4"));
    EXPECT_EQ(b.visible, (Strings{"0", "1", "2", "3"}));
    EXPECT_EQ(b.device_index, 1);
}

TEST(GpuBinding, GpusPerTaskWithStepListShowsWholeNode) {  // srun -n4 --gpus-per-task=1
    for (int rank = 0; rank < 4; ++rank) {
        const std::string own = std::to_string(rank);
        auto b = bind(with_step(task(rank, 4, own, own, "4"), "0,1,2,3", "0,1,2,3"));
        EXPECT_EQ(b.visible, (Strings{"0", "1", "2", "3"}));
        EXPECT_EQ(b.device_index, rank);
        EXPECT_EQ(b.own, own);
    }
}

TEST(GpuBinding, MapGpuPutsSlurmsChoiceAtLocalRank) {  // --gpu-bind=map_gpu:3,2,1,0
    auto b0 = bind(with_step(task(0, 4, "3", "3", "4"), "0,1,2,3", "0,1,2,3"));
    EXPECT_EQ(b0.visible, (Strings{"3", "0", "1", "2"}));
    EXPECT_EQ(b0.device_index, 0);
    auto b1 = bind(with_step(task(1, 4, "2", "2", "4"), "0,1,2,3", "0,1,2,3"));
    EXPECT_EQ(b1.visible, (Strings{"0", "2", "1", "3"}));
    EXPECT_EQ(b1.device_index, 1);
    auto b3 = bind(with_step(task(3, 4, "0", "0", "4"), "0,1,2,3", "0,1,2,3"));
    EXPECT_EQ(b3.visible, (Strings{"1", "2", "3", "0"}));
    EXPECT_EQ(b3.device_index, 3);
}

TEST(GpuBinding, NarrowedWithoutStepListKeepsSlurmsAndExportsIndex) {
    auto b = bind(task(1, 4, "1", "1", "4"));
    EXPECT_EQ(b.visible, (Strings{"1"}));
    EXPECT_EQ(b.device_index, 0);
    EXPECT_EQ(env_of(b, "SLURM_DDP_DEVICE"), "0");
    EXPECT_NE(b.describe.find("unknown"), std::string::npos);
}

TEST(GpuBinding, SingleOnNarrowedTaskWithTwoGpus) {  // --gpus-per-task=2, gpu-bind=single
    auto in = with_step(task(1, 2, "2,3", "2,3", "4"), "0,1,2,3", "0,1,2,3");
    in.policy = GpuBindPolicy::single;
    auto b = bind(in);
    EXPECT_EQ(b.visible, (Strings{"2"}));
    EXPECT_EQ(b.device_index, 0);
}

TEST(GpuBinding, SecondJobOnNodeGlobalIndices) {  // another job holds GPUs 0,1
    auto b = bind(task(1, 2, "2,3", "2,3", "2"));
    EXPECT_EQ(b.visible, (Strings{"2", "3"}));
    EXPECT_EQ(b.device_index, 1);
    EXPECT_EQ(b.own, "3");
    // Same job with --gpus-per-task=1: task 0 got 2, task 1 got 3.
    auto n0 = bind(with_step(task(0, 2, "2", "2", "2"), "2,3", "2,3"));
    EXPECT_EQ(n0.visible, (Strings{"2", "3"}));
    EXPECT_EQ(n0.device_index, 0);
    auto n1 = bind(with_step(task(1, 2, "3", "3", "2"), "2,3", "2,3"));
    EXPECT_EQ(n1.visible, (Strings{"2", "3"}));
    EXPECT_EQ(n1.device_index, 1);
}

TEST(GpuBinding, PerTaskDeviceCgroupKeepsSlurmsList) {
    // ConstrainDevices=yes, --gpus-per-task=1: task 2 owns global GPU 6 and sees it as "0"; the
    // host's look-up (access_from_cgroups) says the task is confined.
    auto in = with_step(task(2, 4, "0", "6", "4"), "0,1,2,3", "4,5,6,7");
    in.access = DeviceAccess::task;
    auto b = bind(in);
    EXPECT_EQ(b.visible, (Strings{"0"}));
    EXPECT_EQ(b.device_index, 0);
    EXPECT_EQ(env_of(b, "SLURM_DDP_DEVICE"), "0");
    EXPECT_NE(b.describe.find("not accessible"), std::string::npos);
    // Task 0 (global 4 -> local 0) looks like global numbering; the plugin's probe says better.
    auto in0 = with_step(task(0, 4, "0", "4", "4"), "0,1,2,3", "4,5,6,7");
    in0.access = DeviceAccess::task;
    auto b0 = bind(in0);
    EXPECT_EQ(b0.visible, (Strings{"0"}));
    EXPECT_EQ(b0.device_index, 0);
}

TEST(GpuBinding, PerTaskDeviceCgroupRenumbersBothLists) {
    // Measured under 22.05 and 26.05 with ConstrainDevices=yes, -n2 --gpus-per-task=1: every task
    // gets CUDA_VISIBLE_DEVICES=0 and SLURM_STEP_GPUS=0, and may open only its own GPU. From the
    // lists alone task 1 looks like one whose GPU is step GPU 0 (node access).
    auto guess = bind(with_step(task(1, 2, "0", "0", "2"), "0,1", "0,1"));
    EXPECT_EQ(guess.visible, (Strings{"1", "0"}));
    // The per-task cgroup says otherwise: Slurm's list stays, the own GPU at 0.
    auto in = with_step(task(1, 2, "0", "0", "2"), "0,1", "0,1");
    in.access = DeviceAccess::task;
    auto b = bind(in);
    EXPECT_EQ(b.visible, (Strings{"0"}));
    EXPECT_EQ(b.device_index, 0);
    EXPECT_EQ(env_of(b, "SLURM_DDP_DEVICE"), "0");
    EXPECT_NE(b.describe.find("not accessible"), std::string::npos);
}

TEST(GpuBinding, FirstTasksStepGpusHandedToEveryTaskAreNotTrusted) {
    // pyxis with enroot's extra/50-slurm-pmi.sh hook, --gpus-per-task=1: every task gets the node's
    // first task's SLURM_STEP_GPUS ("0") beside its own CUDA_VISIBLE_DEVICES ("1" for task 1).
    // Outside the container task 1 sees the node's GPUs with its own at LOCAL_RANK; inside too.
    auto b = bind(with_step(task(1, 2, "1", "0", "2"), "0,1", "0,1"));
    EXPECT_EQ(b.visible, (Strings{"0", "1"}));
    EXPECT_EQ(b.device_index, 1);
    EXPECT_EQ(b.own, "1");
}

TEST(GpuBinding, PerTaskCgroupFromProcSelfCgroup) {
    // cgroup v1 as slurmstepd leaves a task under task/cgroup with ConstrainDevices=yes.
    const std::string v1 =
        "12:pids:/\n7:cpuset:/slurm_n1/uid_0/job_2/step_0\n"
        "6:freezer:/slurm_n1/uid_0/job_2/step_0\n"
        "5:devices:/slurm_n1/uid_0/job_2/step_0/task_0\n1:name=systemd:/\n";
    EXPECT_EQ(access_from_cgroups(v1), DeviceAccess::task);
    // Without the devices controller's task level (ConstrainDevices=no, or task/none).
    EXPECT_EQ(access_from_cgroups("5:devices:/slurm_n1/uid_0/job_2/step_0\n"),
              DeviceAccess::unknown);
    EXPECT_EQ(access_from_cgroups("5:devices:/\n6:freezer:/slurm_n1/uid_0/job_2/step_0\n"),
              DeviceAccess::unknown);
    // A controller set that holds devices.
    EXPECT_EQ(access_from_cgroups("4:cpu,devices:/slurm/uid_0/job_9/step_1/task_3\n"),
              DeviceAccess::task);
    // cgroup v2: one path for everything.
    EXPECT_EQ(access_from_cgroups("0::/system.slice/slurmstepd.scope/job_9/step_0/user/task_1\n"),
              DeviceAccess::task);
    EXPECT_EQ(access_from_cgroups("0::/system.slice/slurmstepd.scope/job_9/step_0/user\n"),
              DeviceAccess::unknown);
    EXPECT_EQ(access_from_cgroups("0::/user.slice/task_1\n"), DeviceAccess::unknown);
    EXPECT_EQ(access_from_cgroups(""), DeviceAccess::unknown);
    EXPECT_EQ(access_from_cgroups("garbage\n::\n"), DeviceAccess::unknown);
}

TEST(GpuBinding, StepLevelLocalIndices) {  // ConstrainDevices=yes, no narrowing
    auto b = bind(task(3, 4, "0,1,2,3", "4,5,6,7", "4"));
    EXPECT_EQ(b.visible, (Strings{"0", "1", "2", "3"}));
    EXPECT_EQ(b.device_index, 3);
}

TEST(GpuBinding, UuidLists) {
    const std::string list = "GPU-aaaa,GPU-bbbb,GPU-cccc";
    auto b = bind(task(1, 3, list, "0,1,2", "3"));
    EXPECT_EQ(b.visible, (Strings{"GPU-aaaa", "GPU-bbbb", "GPU-cccc"}));
    EXPECT_EQ(b.device_index, 1);
    EXPECT_EQ(b.own, "GPU-bbbb");
    EXPECT_EQ(env_of(b, "CUDA_DEVICE_ORDER"), "<unset>");  // order does not matter for UUIDs
    auto n = bind(with_step(task(0, 3, "GPU-cccc", "2", "3"), list, "0,1,2"));
    EXPECT_EQ(n.visible, (Strings{"GPU-cccc", "GPU-aaaa", "GPU-bbbb"}));
    EXPECT_EQ(n.device_index, 0);
}

TEST(GpuBinding, MoreTasksThanGpusIsAClearError) {  // srun -N2 -n4 --gpus-per-node=2 (3 on n1)
    auto r = bind_gpus(task(0, 3, "0,1", "0,1", "2"));
    ASSERT_FALSE(r.ok());
    const auto& m = r.error().message;
    EXPECT_NE(m.find("3 tasks"), std::string::npos) << m;
    EXPECT_NE(m.find("only 2 GPU"), std::string::npos) << m;
    EXPECT_NE(m.find("--gpus-per-task=1"), std::string::npos) << m;
    EXPECT_NE(m.find("gpu-share"), std::string::npos) << m;
    // Slurm itself doubling up (--gpu-bind=single:2, 3 tasks on 2 GPUs) is refused the same way.
    EXPECT_FALSE(bind_gpus(with_step(task(1, 3, "0", "0", "2"), "0,1", "0,1")).ok());
}

TEST(GpuBinding, ShareModeRoundRobin) {
    std::vector<std::pair<std::string, int>> got;
    for (int rank = 0; rank < 5; ++rank) {
        auto in = task(rank, 5, "0,1", "0,1", "2");
        in.allow_share = true;
        auto b = bind(in);
        EXPECT_EQ(b.visible, (Strings{"0", "1"}));
        got.emplace_back(b.own, b.device_index);
    }
    EXPECT_EQ(got, (std::vector<std::pair<std::string, int>>{
                       {"0", 0}, {"1", 1}, {"0", 0}, {"1", 1}, {"0", 0}}));
}

TEST(GpuBinding, NoGpusIsANoOp) {
    GpuBindingInput cpu;
    cpu.local_rank = 0;
    cpu.local_world_size = 2;
    auto b = bind(cpu);
    EXPECT_FALSE(b.changed);
    EXPECT_TRUE(b.env.empty());
    EXPECT_FALSE(bind(task(0, 2, "", "", "0")).changed);
    // A user's own CUDA_VISIBLE_DEVICES on a node without GPU gres: not Slurm's, not touched.
    GpuBindingInput user = cpu;
    user.slurm.task_visible = "1";
    auto u = bind(user);
    EXPECT_FALSE(u.changed);
    EXPECT_NE(u.describe.find("not set by Slurm"), std::string::npos);
}

TEST(GpuBinding, NoneLeavesEverything) {
    auto in = task(1, 4, "1", "1", "4");
    in.policy = GpuBindPolicy::none;
    auto b = bind(in);
    EXPECT_FALSE(b.changed);
    EXPECT_TRUE(b.env.empty());
}

TEST(GpuBinding, GpuDeviceOrdinalOnlyWhenSlurmSetIt) {
    auto in = task(0, 1, "0", "0", "1");
    in.slurm.task_ordinal.reset();
    EXPECT_EQ(env_of(bind(in), "GPU_DEVICE_ORDINAL"), "<unset>");
    // Only GPU_DEVICE_ORDINAL (no CUDA_VISIBLE_DEVICES): it is the list then.
    in.slurm.task_ordinal = "0,1";
    in.slurm.task_visible.reset();
    in.local_world_size = 2;
    in.local_rank = 1;
    in.slurm.gpus_on_node = "2";
    auto b = bind(in);
    EXPECT_EQ(b.device_index, 1);
}

TEST(GpuBinding, BadInputsAreErrors) {
    EXPECT_FALSE(bind_gpus(task(4, 4, "0,1,2,3", "0,1,2,3", "4")).ok());
    EXPECT_FALSE(bind_gpus(task(0, 4, "0,,1", "0,1", "4")).ok());
    EXPECT_FALSE(bind_gpus(task(0, 1, "0", "x", "1")).ok());
    EXPECT_FALSE(bind_gpus(task(0, 1, "0", "0", "many")).ok());
}

TEST(GpuBinding, ClosestFollowsCpuPlacementWithImbalance) {
    // 3 tasks on package 0, 1 on package 1, 8 GPUs: 0,1,2 then 4 (nearest free on package 1).
    const std::vector<TaskPlace> places{{0, 0}, {0, 0}, {0, 0}, {1, 1}};
    std::vector<int> owns;
    for (int rank = 0; rank < 4; ++rank) {
        auto in = task(rank, 4, "0,1,2,3,4,5,6,7", "0,1,2,3,4,5,6,7", "8");
        in.policy = GpuBindPolicy::closest;
        in.topology = two_socket_eight_gpus();
        in.task_places = places;
        auto b = bind(in);
        EXPECT_EQ(b.device_index, rank);
        ASSERT_EQ(b.visible.size(), 8u);
        owns.push_back(std::stoi(b.own));
        if (rank == 3) {
            EXPECT_EQ(b.visible, (Strings{"0", "1", "2", "4", "3", "5", "6", "7"}));
        }
    }
    EXPECT_EQ(owns, (std::vector<int>{0, 1, 2, 4}));
}

TEST(GpuBinding, ClosestWhenTasksStartOnTheSecondSocket) {
    const std::vector<TaskPlace> places{{1, 1}, {1, 1}, {0, 0},   {0, 0},
                                        {1, 1}, {1, 1}, {-1, -1}, {1, 1}};
    EXPECT_EQ(assign_closest(two_socket_eight_gpus().gpus, places, 8),
              (std::vector<int>{4, 5, 0, 1, 6, 7, 2, 3}));
    // 6 tasks on package 0: four get its GPUs, two spill to package 1 (lowest index first).
    const std::vector<TaskPlace> six(6, TaskPlace{0, 0});
    EXPECT_EQ(assign_closest(two_socket_eight_gpus().gpus, six, 6),
              (std::vector<int>{0, 1, 2, 3, 4, 5}));
    // Sharing: 3 tasks on a 2-GPU list wrap round.
    const auto all = two_socket_eight_gpus().gpus;
    const std::vector<GpuFact> two(all.begin() + 3, all.begin() + 5);
    EXPECT_EQ(assign_closest(two, {{1, 1}, {1, 1}, {1, 1}}, 3), (std::vector<int>{1, 0, 1}));
}

TEST(GpuBinding, ClosestUsesGlobalIndicesOfASharedNode) {
    // Step holds GPUs 4,5 (package 1) and 0,1 (package 0), listed by global index; a task on
    // package 1 first gets GPU 4.
    auto in = task(0, 2, "0,1,4,5", "0,1,4,5", "4");
    in.policy = GpuBindPolicy::closest;
    in.topology = two_socket_eight_gpus();
    in.task_places = {{1, 1}, {0, 0}};
    auto b = bind(in);
    EXPECT_EQ(b.own, "4");
    EXPECT_EQ(b.visible, (Strings{"4", "0", "1", "5"}));
    in.local_rank = 1;
    EXPECT_EQ(bind(in).own, "0");
}

TEST(GpuBinding, ClosestRespectsSlurmsNarrowing) {
    auto in = with_step(task(0, 4, "7", "7", "8"), "0,1,2,3,4,5,6,7", "0,1,2,3,4,5,6,7");
    in.policy = GpuBindPolicy::closest;
    in.topology = two_socket_eight_gpus();
    in.task_places = std::vector<TaskPlace>(4, TaskPlace{0, 0});
    auto b = bind(in);
    EXPECT_EQ(b.own, "7");
    EXPECT_EQ(b.device_index, 0);
}

TEST(GpuBinding, ClosestWithoutFactsFallsBackToLocal) {
    auto in = task(1, 2, "0,1", "0,1", "2");
    in.policy = GpuBindPolicy::closest;
    auto b = bind(in);
    EXPECT_EQ(b.own, "1");
    EXPECT_NE(b.describe.find("used local order"), std::string::npos);
}

// NCCL's HCA list must be the same on every rank (NCCL picks the nearest NIC per GPU within it):
// the binding sets none; the per-process hint is UCX's, the HCA behind the GPU's own switch.
TEST(GpuBinding, NetHintsPerProcessOnlyForUcx) {
    GpuTopologyFacts f;
    for (int i = 0; i < 4; ++i) {
        GpuFact g;
        g.index = i;
        g.pci_bus_id = "0000:1" + std::to_string(i) + ":00.0";
        g.numa = g.package = i / 2;
        g.pci_switch = i < 2 ? "0000:10:00.0" : "0000:80:00.0";
        f.gpus.push_back(g);
    }
    f.nics = {NicFact{"eno1", NicKind::netdev, "0000:03:00.0", 0, 0, ""},
              NicFact{"ibp132s0", NicKind::netdev, "0000:84:00.0", 1, 1, "0000:80:00.0"},
              NicFact{"ibp20s0", NicKind::netdev, "0000:14:00.0", 0, 0, "0000:10:00.0"},
              NicFact{"mlx5_0", NicKind::hca, "0000:14:00.0", 0, 0, "0000:10:00.0"},
              NicFact{"mlx5_1", NicKind::hca, "0000:84:00.0", 1, 1, "0000:80:00.0"}};
    auto in = task(2, 4, "0,1,2,3", "0,1,2,3", "4");
    in.topology = f;
    EXPECT_EQ(env_of(bind(in), "UCX_NET_DEVICES"), "<unset>");  // hints are opt-in
    in.nccl_hints = true;
    for (int rank = 0; rank < 4; ++rank) {
        in.local_rank = rank;
        auto b = bind(in);
        EXPECT_EQ(env_of(b, "NCCL_IB_HCA"), "<unset>") << rank;
        EXPECT_EQ(env_of(b, "NCCL_SOCKET_IFNAME"), "<unset>") << rank;  // per node: trainer_env
        EXPECT_EQ(env_of(b, "UCX_NET_DEVICES"), rank < 2 ? "mlx5_0:1 (keep)" : "mlx5_1:1 (keep)")
            << rank;
    }
}

TEST(GpuBinding, PlaceOfCpus) {
    GpuTopologyFacts f;
    f.numa_of_cpu = {0, 0, 1, 1};
    f.package_of_cpu = {0, 0, 0, 0};
    EXPECT_EQ(place_of_cpus(f, {0, 1}), (TaskPlace{0, 0}));
    EXPECT_EQ(place_of_cpus(f, {1, 2}), (TaskPlace{-1, 0}));
    EXPECT_EQ(place_of_cpus(f, {3, 9}), (TaskPlace{-1, -1}));
}

TEST(GpuBinding, ReadSlurmGpuEnv) {
    auto s = read_slurm_gpu_env(
        map_env(
            {{"CUDA_VISIBLE_DEVICES", "1"}, {"SLURM_STEP_GPUS", "1"}, {"SLURM_GPUS_ON_NODE", "4"}}),
        map_env({{"CUDA_VISIBLE_DEVICES", "0,1,2,3"}, {"SLURM_STEP_GPUS", "0,1,2,3"}}));
    EXPECT_EQ(s.task_visible, "1");
    EXPECT_FALSE(s.task_ordinal.has_value());
    EXPECT_EQ(s.gpus_on_node, "4");
    EXPECT_EQ(s.step_visible, "0,1,2,3");
    EXPECT_FALSE(read_slurm_gpu_env(nullptr, nullptr).task_visible.has_value());
}

TEST(GpuBinding, OmpThreads) {
    auto a = omp_threads_assignment("4", "8", 2, 8);
    ASSERT_TRUE(a.has_value());
    EXPECT_EQ(a->value, "4");
    EXPECT_TRUE(a->keep_existing);
    EXPECT_EQ(omp_threads_assignment("junk", std::nullopt, 1, 3)->value, "3");
    EXPECT_EQ(omp_threads_assignment(std::nullopt, std::nullopt, 1, 2)->value, "2");
    EXPECT_FALSE(omp_threads_assignment("0", std::nullopt, 1, 0).has_value());
}

TEST(GpuBinding, OmpThreadsShareTheNodeWithoutBinding) {
    // No binding: every task sees all 16 CPUs of the step; 4 tasks share them.
    EXPECT_EQ(omp_threads_assignment(std::nullopt, "16", 4, 16)->value, "4");
    // Bound to 2 CPUs each: the binding is the smaller.
    EXPECT_EQ(omp_threads_assignment(std::nullopt, "16", 4, 2)->value, "2");
    // Overcommitted: at least one thread.
    EXPECT_EQ(omp_threads_assignment(std::nullopt, "2", 8, 2)->value, "1");
    // Affinity unknown: the share alone.
    EXPECT_EQ(omp_threads_assignment(std::nullopt, "12", 3, 0)->value, "4");
    // Malformed SLURM_CPUS_ON_NODE: the binding alone.
    EXPECT_EQ(omp_threads_assignment(std::nullopt, "x", 3, 5)->value, "5");
}

// gres.conf Flags=amd_gpu_env: Slurm lists the GPUs in ROCR_VISIBLE_DEVICES and sets no
// CUDA_VISIBLE_DEVICES; the binding rewrites that variable with the same rules.
TEST(GpuBinding, AmdGpusBindThroughRocrVisibleDevices) {
    auto env = map_env(
        {{"ROCR_VISIBLE_DEVICES", "0,1"}, {"SLURM_STEP_GPUS", "0,1"}, {"SLURM_GPUS_ON_NODE", "2"}});
    GpuBindingInput in;
    in.local_rank = 1;
    in.local_world_size = 2;
    in.slurm = read_slurm_gpu_env(env, nullptr);
    EXPECT_EQ(in.slurm.visible_var, "ROCR_VISIBLE_DEVICES");
    auto b = bind(in);
    EXPECT_EQ(b.visible, (Strings{"0", "1"}));
    EXPECT_EQ(b.device_index, 1);
    EXPECT_EQ(env_of(b, "ROCR_VISIBLE_DEVICES"), "0,1");
    EXPECT_EQ(env_of(b, "SLURM_DDP_DEVICE"), "1");
    EXPECT_EQ(env_of(b, "CUDA_VISIBLE_DEVICES"), "<unset>");
    EXPECT_EQ(env_of(b, "CUDA_DEVICE_ORDER"), "<unset>");
    in.policy = GpuBindPolicy::single;
    auto single = bind(in);
    EXPECT_EQ(env_of(single, "ROCR_VISIBLE_DEVICES"), "1");
    EXPECT_EQ(env_of(single, "SLURM_DDP_DEVICE"), "0");
    EXPECT_EQ(env_of(single, "CUDA_VISIBLE_DEVICES"), "<unset>");
    // More tasks than GPUs names the variable Slurm used.
    in.policy = GpuBindPolicy::local;
    in.local_world_size = 3;
    auto crowded = bind_gpus(in);
    ASSERT_FALSE(crowded);
    EXPECT_NE(crowded.error().message.find("ROCR_VISIBLE_DEVICES='0,1'"), std::string::npos)
        << crowded.error().message;
}

// Flags=intel_gpu_env: ZE_AFFINITY_MASK, narrowed per task under --gpus-per-task and widened
// from the step's list as for NVIDIA.
TEST(GpuBinding, IntelGpusBindThroughZeAffinityMask) {
    auto task_env =
        map_env({{"ZE_AFFINITY_MASK", "1"}, {"SLURM_STEP_GPUS", "1"}, {"SLURM_GPUS_ON_NODE", "2"}});
    auto step_env = map_env({{"ZE_AFFINITY_MASK", "0,1"}, {"SLURM_STEP_GPUS", "0,1"}});
    GpuBindingInput in;
    in.local_rank = 1;
    in.local_world_size = 2;
    in.slurm = read_slurm_gpu_env(task_env, step_env);
    EXPECT_EQ(in.slurm.visible_var, "ZE_AFFINITY_MASK");
    EXPECT_EQ(in.slurm.step_visible, "0,1");
    auto b = bind(in);
    EXPECT_EQ(env_of(b, "ZE_AFFINITY_MASK"), "0,1");
    EXPECT_EQ(env_of(b, "SLURM_DDP_DEVICE"), "1");
    EXPECT_EQ(env_of(b, "CUDA_VISIBLE_DEVICES"), "<unset>");
    // A value a user exported without Slurm's gres is not ours to touch.
    GpuBindingInput user;
    user.slurm = read_slurm_gpu_env(map_env({{"ZE_AFFINITY_MASK", "0"}}), nullptr);
    EXPECT_FALSE(bind(user).changed);
}

// MIG instances as gres: CUDA_VISIBLE_DEVICES holds their unique ids (gpu/nvml's
// "MIG-<uuid>", or "MIG-GPU-<uuid>/<gi>/<ci>" from older drivers) and SLURM_STEP_GPUS their
// indices. CUDA uses only the first MIG instance it is shown, so every rank is shown its own.
TEST(GpuBinding, MigInstanceOfItsOwnForEveryLocalRank) {
    const std::string a = "MIG-9b3a6c41-9c3e-5d3f-8e8b-1f1c2b0a9d11";
    const std::string b = "MIG-GPU-8932f937-d72c-4106-c12f-20bd9faed9f6/1/0";
    for (auto policy : {GpuBindPolicy::local, GpuBindPolicy::single, GpuBindPolicy::closest}) {
        for (int rank = 0; rank < 2; ++rank) {
            auto in = task(rank, 2, a + "," + b, "0,1", "2");
            in.slurm.task_ordinal.reset();
            in.policy = policy;
            auto r = bind(in);
            EXPECT_EQ(r.visible, (Strings{rank == 0 ? a : b})) << to_string(policy);
            EXPECT_EQ(r.device_index, 0);
            EXPECT_EQ(env_of(r, "SLURM_DDP_DEVICE"), "0");
        }
    }
    // --gpus-per-task=1 with the step's list known: still the own instance alone.
    auto narrowed = bind(with_step(task(1, 2, b, "1", "2"), a + "," + b, "0,1"));
    EXPECT_EQ(narrowed.visible, (Strings{b}));
    EXPECT_EQ(narrowed.device_index, 0);
}

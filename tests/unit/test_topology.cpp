// SPDX-License-Identifier: Apache-2.0
// Topology facts from saved hwloc XML files (tests/topologies, see its README) and from fixture
// copies of the NVIDIA driver's /proc files, so no GPU, NIC or driver is needed.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/gpu/gpu_binding.hpp"
#include "topology/device_access.hpp"
#include "topology/gpu_facts.hpp"
#include "topology/hwloc_topology.hpp"
#include "topology/nvidia_driver.hpp"

using namespace sddp;

namespace {

const std::string kTopoDir = SDDP_TEST_TOPOLOGY_DIR;

constexpr const char* kInfoA100 =
    "Model: \t\t NVIDIA A100-SXM4-40GB\n"
    "IRQ:   \t\t 140\n"
    "GPU UUID: \t GPU-8932f937-d72c-4106-c12f-20bd9faed9f6\n"
    "Video BIOS: \t 92.00.19.00.01\n"
    "Bus Type: \t PCIe\n"
    "DMA Size: \t 47 bits\n"
    "DMA Mask: \t 0x7fffffffffff\n"
    "Bus Location: \t 0000:31:00.0\n"
    "Device Minor: \t 1\n"
    "GPU Excluded:\t No\n";

// A temporary directory tree, removed with its files on scope exit.
class TempDir {
  public:
    TempDir() {
        char tmpl[] = "/tmp/sddp-topo-XXXXXX";
        if (mkdtemp(tmpl) != nullptr) path_ = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        if (!path_.empty()) std::filesystem::remove_all(path_, ec);
    }
    const std::string& path() const { return path_; }
    void write(const std::string& rel, const std::string& text) const {
        const auto slash = rel.rfind('/');
        std::error_code ec;
        if (slash != std::string::npos)
            std::filesystem::create_directories(path_ + "/" + rel.substr(0, slash), ec);
        std::ofstream(path_ + "/" + rel) << text;
    }

  private:
    std::string path_;
};

}  // namespace

TEST(NvidiaDriver, NormalizeBusIds) {
    EXPECT_EQ(normalize_pci_bus_id("0000:3B:00.0"), "0000:3b:00.0");
    EXPECT_EQ(normalize_pci_bus_id("00000000:3b:00.0"), "0000:3b:00.0");  // NVML style
    EXPECT_EQ(normalize_pci_bus_id("3b:00.1"), "0000:3b:00.1");
    EXPECT_FALSE(normalize_pci_bus_id("3b:00").has_value());
    EXPECT_FALSE(normalize_pci_bus_id("zz:00.0").has_value());
    EXPECT_FALSE(normalize_pci_bus_id("0000:3b:00.9").has_value());
}

TEST(NvidiaDriver, ParseInformationFile) {
    auto g = parse_nvidia_gpu_information(kInfoA100, "0000:31:00.0");
    ASSERT_TRUE(g.ok()) << g.error().message;
    EXPECT_EQ(g->pci_bus_id, "0000:31:00.0");
    EXPECT_EQ(g->minor, 1);
    EXPECT_EQ(g->uuid, "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6");
    EXPECT_EQ(g->model, "NVIDIA A100-SXM4-40GB");
    // No Bus Location line: the directory name gives it.
    auto d = parse_nvidia_gpu_information("Device Minor: 3\n", "0000:65:00.0");
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(d->pci_bus_id, "0000:65:00.0");
    EXPECT_FALSE(parse_nvidia_gpu_information("Model: x\n", "0000:65:00.0").ok());
    EXPECT_FALSE(parse_nvidia_gpu_information("Device Minor: -1\n", "0000:65:00.0").ok());
}

TEST(NvidiaDriver, ReadDirectoryAndFallBackCleanly) {
    TempDir t;
    ASSERT_FALSE(t.path().empty());
    t.write("0000:31:00.0/information", kInfoA100);
    t.write("0000:17:00.0/information", "Device Minor: 0\nGPU UUID: GPU-aaaa\n");
    t.write("0000:4b:00.0/information", "garbage\n");
    ::mkdir((t.path() + "/0000:65:00.0").c_str(), 0700);  // no information file
    int skipped = -1;
    auto gpus = read_nvidia_driver_gpus(t.path(), &skipped);
    ASSERT_EQ(gpus.size(), 2u);
    EXPECT_EQ(gpus[0].pci_bus_id, "0000:17:00.0");
    EXPECT_EQ(gpus[0].minor, 0);
    EXPECT_EQ(gpus[1].minor, 1);
    EXPECT_EQ(skipped, 2);
    EXPECT_TRUE(read_nvidia_driver_gpus(t.path() + "/absent", &skipped).empty());
    EXPECT_EQ(skipped, 0);
}

TEST(NvidiaDriver, MergeByBusId) {
    GpuTopologyFacts f;
    f.gpus = {GpuFact{0, "0000:17:00.0", "", -1, 0, 0, ""},
              GpuFact{1, "0000:31:00.0", "", -1, 0, 0, ""}};
    merge_driver_facts(f, {NvidiaDriverGpu{"0000:31:00.0", 5, "GPU-b", ""},
                           NvidiaDriverGpu{"0000:99:00.0", 7, "GPU-c", ""}});
    ASSERT_EQ(f.gpus.size(), 3u);
    EXPECT_EQ(f.gpus[0].minor, -1);
    EXPECT_EQ(f.gpus[1].minor, 5);
    EXPECT_EQ(f.gpus[1].uuid, "GPU-b");
    EXPECT_EQ(f.gpus[2].index, 2);  // unknown to the topology: appended
    EXPECT_EQ(f.gpus[2].numa, -1);
}

TEST(DeviceAccess, ProbeFiles) {
    EXPECT_EQ(probe_device("/dev/null"), DeviceOpen::accessible);
    EXPECT_EQ(probe_device("/nonexistent/nvidia0"), DeviceOpen::absent);
    EXPECT_EQ(probe_peer_access({}), DeviceAccess::unknown);
    EXPECT_EQ(probe_peer_access({"/dev/null"}), DeviceAccess::node);
    EXPECT_EQ(probe_peer_access({"/dev/null", "/nonexistent/nvidia1"}), DeviceAccess::unknown);
    auto cpus = read_task_cpus();
    ASSERT_TRUE(cpus.ok());
    EXPECT_FALSE(cpus->empty());
}

#if SDDP_HAVE_HWLOC

TEST(Topology, TwoSocketsEightGpus) {
    auto topo = HwlocTopology::load_xml_file(kTopoDir + "/2pkg-8gpu.xml");
    ASSERT_TRUE(topo.ok()) << topo.error().message;
    auto f = gpu_facts_from_topology(*topo);
    ASSERT_TRUE(f.ok());
    ASSERT_EQ(f->gpus.size(), 8u);
    const char* bus[] = {"0000:17:00.0", "0000:31:00.0", "0000:4b:00.0", "0000:65:00.0",
                         "0000:b1:00.0", "0000:ca:00.0", "0000:e3:00.0", "0000:f0:00.0"};
    for (int i = 0; i < 8; ++i) {
        const auto& g = f->gpus[static_cast<std::size_t>(i)];
        EXPECT_EQ(g.index, i);
        EXPECT_EQ(g.pci_bus_id, bus[i]);
        EXPECT_EQ(g.numa, i < 4 ? 0 : 1);
        EXPECT_EQ(g.package, i < 4 ? 0 : 1);
        EXPECT_EQ(g.pci_switch, "");
    }
    ASSERT_EQ(f->numa_of_cpu.size(), 16u);
    EXPECT_EQ(place_of_cpus(*f, {8, 9}), (TaskPlace{1, 1}));
    EXPECT_EQ(place_of_cpus(*f, {7, 8}), (TaskPlace{-1, -1}));
    ASSERT_EQ(f->nics.size(), 1u);
    EXPECT_EQ(f->nics[0].name, "eno1");
}

TEST(Topology, OneSocketFourGpus) {
    auto topo = HwlocTopology::load_xml_file(kTopoDir + "/1pkg-4gpu.xml");
    ASSERT_TRUE(topo.ok()) << topo.error().message;
    auto f = gpu_facts_from_topology(*topo);
    ASSERT_TRUE(f.ok());
    ASSERT_EQ(f->gpus.size(), 4u);
    for (const auto& g : f->gpus) EXPECT_EQ(g.numa, 0);
    // closest on one socket is local order.
    GpuBindingInput in;
    in.policy = GpuBindPolicy::closest;
    in.local_world_size = 4;
    in.slurm.task_visible = "0,1,2,3";
    in.slurm.task_gpus = "0,1,2,3";
    in.topology = *f;
    for (int r = 0; r < 4; ++r) in.task_places.push_back(place_of_cpus(*f, {2 * r, 2 * r + 1}));
    for (int r = 0; r < 4; ++r) {
        in.local_rank = r;
        auto b = bind_gpus(in);
        ASSERT_TRUE(b.ok());
        EXPECT_EQ(b->own, std::to_string(r));
    }
}

TEST(Topology, NicsBehindPcieSwitches) {
    auto topo = HwlocTopology::load_xml_file(kTopoDir + "/2pkg-4gpu-2hca.xml");
    ASSERT_TRUE(topo.ok()) << topo.error().message;
    auto f = gpu_facts_from_topology(*topo);
    ASSERT_TRUE(f.ok());
    ASSERT_EQ(f->gpus.size(), 4u);
    EXPECT_EQ(f->gpus[0].pci_switch, "0000:10:00.0");
    EXPECT_EQ(f->gpus[3].pci_switch, "0000:80:00.0");
    ASSERT_EQ(f->nics.size(), 5u);  // eno1, ibp132s0, ibp20s0, mlx5_0, mlx5_1
    EXPECT_EQ(f->nics[3].name, "mlx5_0");
    EXPECT_EQ(f->nics[3].kind, NicKind::hca);
    EXPECT_EQ(f->nics[3].pci_bus_id, "0000:14:00.0");
    EXPECT_EQ(f->nics[3].pci_switch, "0000:10:00.0");
    EXPECT_EQ(f->nics[4].numa, 1);

    GpuBindingInput in;
    in.local_world_size = 4;
    in.nccl_hints = true;
    in.slurm.task_visible = "0,1,2,3";
    in.slurm.task_gpus = "0,1,2,3";
    in.topology = *f;
    const char* hca[] = {"mlx5_0:1", "mlx5_0:1", "mlx5_1:1", "mlx5_1:1"};
    for (int r = 0; r < 4; ++r) {
        in.local_rank = r;
        auto b = bind_gpus(in);
        ASSERT_TRUE(b.ok());
        std::string got;
        for (const auto& e : b->env)
            if (e.name == "UCX_NET_DEVICES") got = e.value;
        EXPECT_EQ(got, hca[r]) << "rank " << r;
    }
}

TEST(Topology, ImbalancedClosestFromXml) {
    auto topo = HwlocTopology::load_xml_file(kTopoDir + "/2pkg-8gpu.xml");
    ASSERT_TRUE(topo.ok());
    auto f = gpu_facts_from_topology(*topo);
    ASSERT_TRUE(f.ok());
    // Slurm's block layout with cpu binding: tasks 0-2 on CPUs 0-5 (package 0), task 3 on 8-9.
    const std::vector<TaskPlace> places{place_of_cpus(*f, {0, 1}), place_of_cpus(*f, {2, 3}),
                                        place_of_cpus(*f, {4, 5}), place_of_cpus(*f, {8, 9})};
    EXPECT_EQ(assign_closest(f->gpus, places, 4), (std::vector<int>{0, 1, 2, 4}));
}

TEST(Topology, HwlocXmlFileVariable) {
    const char* old = std::getenv("HWLOC_XMLFILE");
    const std::string saved = old != nullptr ? old : "";
    ::setenv("HWLOC_XMLFILE", (kTopoDir + "/1pkg-4gpu.xml").c_str(), 1);
    auto topo = HwlocTopology::load_this_machine();
    if (old != nullptr)
        ::setenv("HWLOC_XMLFILE", saved.c_str(), 1);
    else
        ::unsetenv("HWLOC_XMLFILE");
    ASSERT_TRUE(topo.ok()) << topo.error().message;
    auto f = gpu_facts_from_topology(*topo);
    ASSERT_TRUE(f.ok());
    EXPECT_EQ(f->gpus.size(), 4u);
}

TEST(Topology, MissingFileIsAnError) {
    auto topo = HwlocTopology::load_xml_file(kTopoDir + "/absent.xml");
    ASSERT_FALSE(topo.ok());
    EXPECT_NE(topo.error().message.find("absent.xml"), std::string::npos);
}

TEST(Topology, NodeFactsJoinDriverInfo) {
    TempDir t;
    t.write("0000:31:00.0/information", kInfoA100);
    NodeFactsSource src;
    src.xml_path = kTopoDir + "/2pkg-8gpu.xml";
    src.driver_gpus_dir = t.path();
    std::string note;
    auto f = read_node_gpu_facts(src, &note);
    EXPECT_EQ(note, "");
    ASSERT_EQ(f.gpus.size(), 8u);
    EXPECT_EQ(f.gpus[1].minor, 1);
    EXPECT_EQ(f.gpus[1].uuid, "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6");
    // A UUID-style CUDA_VISIBLE_DEVICES finds its facts by UUID (prefix).
    GpuBindingInput in;
    in.policy = GpuBindPolicy::closest;
    in.local_world_size = 1;
    in.slurm.task_visible = "GPU-8932f937";
    in.slurm.gpus_on_node = "1";
    in.topology = f;
    in.task_places = {TaskPlace{0, 0}};
    auto b = bind_gpus(in);
    ASSERT_TRUE(b.ok()) << b.error().message;
    EXPECT_EQ(b->own, "GPU-8932f937");
}

TEST(Topology, ThisMachineLoads) {
    // Without hwloc's PCI component: libpciaccess leaks ~1 KB per discovery, which would fail
    // this test under LeakSanitizer (SDDP_SANITIZE=address) for reasons outside this project.
    const char* old = std::getenv("HWLOC_COMPONENTS");
    const std::string saved = old != nullptr ? old : "";
    ::setenv("HWLOC_COMPONENTS", "-pci", 1);
    auto topo = HwlocTopology::load_this_machine();
    if (old != nullptr)
        ::setenv("HWLOC_COMPONENTS", saved.c_str(), 1);
    else
        ::unsetenv("HWLOC_COMPONENTS");
    ASSERT_TRUE(topo.ok()) << topo.error().message;
    auto f = gpu_facts_from_topology(*topo);
    ASSERT_TRUE(f.ok());
    EXPECT_FALSE(f->numa_of_cpu.empty());
}

#endif  // SDDP_HAVE_HWLOC

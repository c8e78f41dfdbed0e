// SPDX-License-Identifier: Apache-2.0
// derive_task_env: the whole per-task pipeline the plugin and `slurm-ddp env` share.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <map>
#include <set>

#include "core/task/task_env.hpp"

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

Result<TaskEnv> derive(const Vars& vars, const StepOptions& opts, const TaskHostFacts& host = {},
                       TableWanted table = TableWanted::rank0_if_verbose,
                       const TaskLookups& lookups = {}) {
    const EnvLookup env = map_env(vars);
    auto facts = read_step_facts(env);
    if (!facts) return facts.take_error();
    return derive_task_env(env, opts, *facts, host, lookups, table);
}

TaskLookups cpus_lookup(std::vector<int> cpus) {
    TaskLookups l;
    l.task_cpus = [cpus] { return std::optional<std::vector<int>>(cpus); };
    return l;
}

}  // namespace

TEST(TaskEnv, GpuStepGetsLaunchBindingAndThreads) {
    auto t = derive(gpu_task(3), {}, {}, TableWanted::rank0_if_verbose, cpus_lookup({2, 3}));
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
    auto t = derive(vars, {}, {}, TableWanted::rank0_if_verbose, cpus_lookup({0}));
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
    StepOptions verbose;
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
    // A policy is typed when --ddp is parsed: an unknown one never reaches the pipeline.
    auto vars = gpu_task(0);
    vars["SLURM_STEP_TASKS_PER_NODE"] = "3(x2)";
    StepOptions none;
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
    StepOptions opts;
    EXPECT_FALSE(needs_topology(opts));
    opts.gpu_bind = GpuBindPolicy::closest;
    EXPECT_TRUE(needs_topology(opts));
    opts.gpu_bind = GpuBindPolicy::single;
    opts.nccl_hints = true;
    EXPECT_TRUE(needs_topology(opts));
}

// ---- --ddp=jax, tf, hostfile: variables per rank. -----------------------------------------

namespace {

StepOptions opts_of(const char* text) {
    auto o = parse_user_options(text);
    EXPECT_TRUE(o.ok()) << text;
    return merge_options(DdpOptions{}, o.ok() ? *o : DdpOptions{});
}

// Task `procid` of `srun -N3 -n5` on n2, n10, n9 (Slurm's order, not a sorted one): 2+2+1 tasks.
Vars uneven_task(std::uint32_t procid) {
    const std::uint32_t node = procid < 2 ? 0 : (procid < 4 ? 1 : 2);
    const std::uint32_t local = procid - (node == 0 ? 0 : (node == 1 ? 2 : 4));
    const char* names[] = {"n2", "n10", "n9"};
    return Vars{{"SLURM_JOB_ID", "88"},
                {"SLURM_STEP_ID", "1"},
                {"SLURM_PROCID", std::to_string(procid)},
                {"SLURM_LOCALID", std::to_string(local)},
                {"SLURM_NODEID", std::to_string(node)},
                {"SLURM_STEP_NUM_TASKS", "5"},
                {"SLURM_STEP_NUM_NODES", "3"},
                {"SLURM_STEP_NODELIST", "n2,n10,n9"},
                {"SLURM_STEP_TASKS_PER_NODE", "2(x2),1"},
                {"SLURMD_NODENAME", names[node]},
                {"SLURM_DISTRIBUTION", "block"},
                {"SLURM_STEP_RESV_PORTS", "21000-21007"}};
}

}  // namespace

TEST(TaskEnv, JaxCoordinatorIsMasterAddrAndPort) {
    for (std::uint32_t r = 0; r < 4; ++r) {
        auto t = derive(gpu_task(r), opts_of("jax"));
        ASSERT_TRUE(t.ok()) << t.error().message;
        auto m = as_map(*t);
        EXPECT_EQ(m["JAX_COORDINATOR_ADDRESS"], "n1:" + m["MASTER_PORT"]);
        EXPECT_EQ(m["JAX_NUM_PROCESSES"], "4");
        EXPECT_EQ(m["JAX_PROCESS_ID"], std::to_string(r));
        EXPECT_EQ(m["JAX_LOCAL_DEVICE_IDS"], m["SLURM_DDP_DEVICE"]);
        EXPECT_EQ(m["JAX_LOCAL_DEVICE_IDS"], std::to_string(r % 2));
    }
    // single binding: the own GPU is device 0, not SLURM_LOCALID as JAX would assume.
    auto single = derive(gpu_task(3), opts_of("jax,gpu-bind=single"));
    ASSERT_TRUE(single.ok()) << single.error().message;
    EXPECT_EQ(as_map(*single)["JAX_LOCAL_DEVICE_IDS"], "0");
    // No GPUs: no device ids; nothing JAX-specific without the option.
    auto cpu = derive(uneven_task(0), opts_of("jax"));
    ASSERT_TRUE(cpu.ok()) << cpu.error().message;
    EXPECT_EQ(as_map(*cpu).count("JAX_LOCAL_DEVICE_IDS"), 0u);
    EXPECT_EQ(as_map(*cpu)["JAX_COORDINATOR_ADDRESS"], "n2:21000");
    auto plain = derive(gpu_task(0), {});
    ASSERT_TRUE(plain.ok());
    EXPECT_EQ(as_map(*plain).count("JAX_COORDINATOR_ADDRESS"), 0u);
    EXPECT_EQ(as_map(*plain).count("TF_CONFIG"), 0u);
}

TEST(TaskEnv, TfConfigListsWorkersInRankOrderWithOwnPorts) {
    const std::string workers =
        R"({"cluster":{"worker":["n2:21001","n2:21002","n10:21001","n10:21002","n9:21001"]},)";
    for (std::uint32_t r = 0; r < 5; ++r) {
        auto t = derive(uneven_task(r), opts_of("tf"));
        ASSERT_TRUE(t.ok()) << t.error().message;
        EXPECT_EQ(as_map(*t)["TF_CONFIG"],
                  workers + R"("task":{"type":"worker","index":)" + std::to_string(r) + "}}");
    }
    // The derived block grows to what tf needs (3 here, so the default 4 stays)...
    auto derived = uneven_task(0);
    derived.erase("SLURM_STEP_RESV_PORTS");
    derived["SLURM_STEP_NUM_NODES"] = "1";
    derived["SLURM_STEP_NODELIST"] = "n2";
    derived["SLURM_NODEID"] = "0";
    derived["SLURM_LOCALID"] = "0";
    derived["SLURM_STEP_TASKS_PER_NODE"] = "5";
    auto grown = derive(derived, opts_of("tf"));
    ASSERT_TRUE(grown.ok()) << grown.error().message;
    EXPECT_EQ(grown->launch.ports_last - grown->launch.master_port + 1, 6);
    // ...and a block someone fixed too small is refused with the size to give.
    auto small = derive(uneven_task(0), opts_of("tf,ports=2"));
    ASSERT_FALSE(small.ok());
    EXPECT_NE(small.error().message.find("ports=3"), std::string::npos) << small.error().message;
}

TEST(TaskEnv, TfBindsEachWorkerToItsOwnGpuUnlessTold) {
    auto t = derive(gpu_task(1), opts_of("tf"));
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(as_map(*t)["CUDA_VISIBLE_DEVICES"], "1");
    EXPECT_EQ(as_map(*t)["SLURM_DDP_DEVICE"], "0");
    auto local = derive(gpu_task(1), opts_of("tf,gpu-bind=local"));
    ASSERT_TRUE(local.ok()) << local.error().message;
    EXPECT_EQ(as_map(*local)["CUDA_VISIBLE_DEVICES"], "0,1");
}

TEST(TaskEnv, HostfileRankZeroNodeFirstWithSlots) {
    TaskHostFacts host;
    host.uid = 1234;
    auto t = derive(uneven_task(3), opts_of("hostfile"), host);
    ASSERT_TRUE(t.ok()) << t.error().message;
    ASSERT_TRUE(t->hostfile.has_value());
    EXPECT_EQ(t->hostfile->text, "n2 slots=2\nn10 slots=2\nn9 slots=1\n");
    EXPECT_EQ(t->hostfile->path,
              "/tmp/slurm-ddp-hostfile.1234.88.1." + std::to_string(t->facts.nodeid));
    EXPECT_EQ(as_map(*t)["SLURM_DDP_HOSTFILE"], t->hostfile->path);
    // Every task of the step computes the same text; each node its own path (nodes may share
    // /tmp, and each removes its own file when its tasks end).
    std::set<std::string> paths;
    for (std::uint32_t r = 0; r < 5; ++r) {
        auto other = derive(uneven_task(r), opts_of("hostfile,tf"), host);
        ASSERT_TRUE(other.ok()) << other.error().message;
        EXPECT_EQ(other->hostfile->text, t->hostfile->text);
        EXPECT_EQ(other->hostfile->path,
                  "/tmp/slurm-ddp-hostfile.1234.88.1." + std::to_string(other->facts.nodeid));
        paths.insert(other->hostfile->path);
    }
    EXPECT_EQ(paths.size(), 3U);  // n2, n10, n9
    // Under launcher the slots are each node's workers (nproc).
    auto one_per_node = gpu_task(0);
    one_per_node["SLURM_STEP_TASKS_PER_NODE"] = "1(x2)";
    one_per_node["SLURM_STEP_NUM_TASKS"] = "2";
    auto launcher = derive(one_per_node, opts_of("hostfile,launcher,nproc=3"), host);
    ASSERT_TRUE(launcher.ok()) << launcher.error().message;
    EXPECT_EQ(launcher->hostfile->text, "n1 slots=3\nn2 slots=3\n");
    // Without the option: no file, no variable.
    auto plain = derive(uneven_task(0), {}, host);
    ASSERT_TRUE(plain.ok());
    EXPECT_FALSE(plain->hostfile.has_value());
    EXPECT_EQ(as_map(*plain).count("SLURM_DDP_HOSTFILE"), 0u);
}

TEST(TaskEnv, HostfileRankZeroNodeFirstUnderCyclicNodeOrder) {
    // rank-order=node with rank 0 on the first node; a cyclic step puts rank 0 on n2 too.
    auto vars = uneven_task(0);
    vars["SLURM_DISTRIBUTION"] = "cyclic";
    auto t = derive(vars, opts_of("hostfile"));
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(t->hostfile->text.substr(0, 3), "n2 ");
}

TEST(TaskEnv, VerboseTableSaysTheSameForEveryNode) {
    auto t = derive(gpu_task(0), opts_of("verbose,jax,hostfile"));
    ASSERT_TRUE(t.ok()) << t.error().message;
    const std::string& table = t->table;
    EXPECT_EQ(table.find("node-local"), std::string::npos) << table;
    // Rank 1 (n1, local 1) and rank 3 (n2, local 1) read alike.
    auto row = [&](const std::string& start) {
        const auto at = table.find("\n  " + start);
        EXPECT_NE(at, std::string::npos) << table;
        const auto end = table.find('\n', at + 1);
        const std::string line = table.substr(at + 1, end - at - 1);
        return line.substr(line.find("1           ") + 12);  // the GPU column after LOCAL_RANK 1
    };
    EXPECT_EQ(row("1     n1"), row("3     n2"));
    EXPECT_NE(table.find("JAX_COORDINATOR_ADDRESS"), std::string::npos) << table;
    EXPECT_NE(table.find("SLURM_DDP_HOSTFILE"), std::string::npos) << table;
    // A CPU step: "none" on every row alike.
    auto cpu = gpu_task(0);
    cpu.erase("CUDA_VISIBLE_DEVICES");
    cpu.erase("SLURM_STEP_GPUS");
    cpu.erase("SLURM_GPUS_ON_NODE");
    auto c = derive(cpu, opts_of("verbose"));
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->table.find("node-local"), std::string::npos) << c->table;
}

// ---- The verdicts the derive pass makes itself, each with injected look-ups. -------------

TEST(TaskEnv, ContainerMasterIsReplacedAsWithOverride) {
    auto vars = gpu_task(1);
    vars["MASTER_ADDR"] = "10.0.0.9";
    vars["MASTER_PORT"] = "1234";
    TaskHostFacts host;
    host.launch.user_master_addr = "10.0.0.9";
    host.launch.user_master_port = "1234";
    // srun launched the step without them: another plugin (a container hook) added them.
    host.master_at_launch = false;
    auto replaced = derive(vars, {}, host);
    ASSERT_TRUE(replaced.ok()) << replaced.error().message;
    EXPECT_EQ(as_map(*replaced)["MASTER_ADDR"], "n1");
    EXPECT_NE(as_map(*replaced)["MASTER_PORT"], "1234");
    EXPECT_TRUE(replaced->options.override_env);
    ASSERT_EQ(replaced->notes.size(), 1u);
    EXPECT_NE(replaced->notes[0].find("appeared after launch"), std::string::npos);
    for (const auto& v : replaced->vars) {
        if (v.name == "MASTER_ADDR" || v.name == "MASTER_PORT") {
            EXPECT_FALSE(v.keep_existing);
        }
    }
    // srun carried them (the user's), or nobody knows (the CLI): the user's values stay.
    for (const std::optional<bool> at_launch : {std::optional<bool>(true), std::optional<bool>()}) {
        host.master_at_launch = at_launch;
        auto kept = derive(vars, {}, host);
        ASSERT_TRUE(kept.ok()) << kept.error().message;
        EXPECT_EQ(as_map(*kept)["MASTER_ADDR"], "10.0.0.9");
        EXPECT_EQ(as_map(*kept)["MASTER_PORT"], "1234");
        EXPECT_TRUE(kept->notes.empty());
        EXPECT_FALSE(kept->options.override_env);
    }
}

TEST(TaskEnv, BusyMasterPortFailsRankZeroOnly) {
    std::vector<std::uint16_t> probed;
    TaskLookups busy;
    busy.port_bind_errno = [&](std::uint16_t port) {
        probed.push_back(port);
        return EADDRINUSE;
    };
    auto r0 = derive(gpu_task(0), {}, {}, TableWanted::never, busy);
    ASSERT_FALSE(r0.ok());
    EXPECT_NE(r0.error().message.find("another process holds it"), std::string::npos)
        << r0.error().message;
    ASSERT_EQ(probed.size(), 1u);
    EXPECT_NE(r0.error().message.find("MASTER_PORT=" + std::to_string(probed[0]) + " (derived)"),
              std::string::npos)
        << r0.error().message;
    // Other ranks do not run the server; addr= names a host rank 0 may not run on; a port the
    // user exported is the user's to manage: none of them is probed.
    probed.clear();
    EXPECT_TRUE(derive(gpu_task(1), {}, {}, TableWanted::never, busy).ok());
    EXPECT_TRUE(derive(gpu_task(0), opts_of("addr=n1"), {}, TableWanted::never, busy).ok());
    auto user_port = gpu_task(0);
    user_port["MASTER_PORT"] = "29500";
    TaskHostFacts host;
    host.launch.user_master_port = "29500";
    EXPECT_TRUE(derive(user_port, {}, host, TableWanted::never, busy).ok());
    EXPECT_TRUE(probed.empty());
    // A free port passes.
    TaskLookups free_port;
    free_port.port_bind_errno = [](std::uint16_t) { return 0; };
    EXPECT_TRUE(derive(gpu_task(0), {}, {}, TableWanted::never, free_port).ok());
}

TEST(TaskEnv, ClosestBindingAsksTheTopologyOnlyWhenUsed) {
    // One node, two tasks, four GPUs: 0,1 on package 0 and 2,3 on package 1. Task 0 is bound to
    // CPU 1 (package 1), task 1 to CPU 0 (package 0).
    auto vars = gpu_task(0);
    vars["SLURM_STEP_NUM_TASKS"] = "2";
    vars["SLURM_STEP_NUM_NODES"] = "1";
    vars["SLURM_STEP_NODELIST"] = "n1";
    vars["SLURM_STEP_TASKS_PER_NODE"] = "2";
    vars["CUDA_VISIBLE_DEVICES"] = "0,1,2,3";
    vars["SLURM_STEP_GPUS"] = "0,1,2,3";
    vars["SLURM_GPUS_ON_NODE"] = "4";
    vars["SLURM_CPU_BIND_LIST"] = "0x2,0x1";
    int asked = 0;
    TaskLookups lookups;
    lookups.topology = [&](std::string* note) {
        ++asked;
        *note = "saved two-socket test topology";
        GpuTopologyFacts f;
        for (int i = 0; i < 4; ++i) {
            GpuFact g;
            g.index = i;
            g.pci_bus_id = "0000:0" + std::to_string(i) + ":00.0";
            g.numa = g.package = i < 2 ? 0 : 1;
            f.gpus.push_back(g);
        }
        f.numa_of_cpu = f.package_of_cpu = {0, 1};
        return std::optional<GpuTopologyFacts>(f);
    };
    auto closest = derive(vars, opts_of("gpu-bind=closest"), {}, TableWanted::never, lookups);
    ASSERT_TRUE(closest.ok()) << closest.error().message;
    EXPECT_EQ(asked, 1);
    EXPECT_EQ(closest->binding.own, "2");  // the first GPU of the task's package
    EXPECT_EQ(as_map(*closest)["SLURM_DDP_DEVICE"], "0");
    EXPECT_EQ(closest->notes, std::vector<std::string>{"topology: saved two-socket test topology"});
    vars["SLURM_LOCALID"] = "1";
    vars["SLURM_PROCID"] = "1";
    auto second = derive(vars, opts_of("gpu-bind=closest"), {}, TableWanted::never, lookups);
    ASSERT_TRUE(second.ok()) << second.error().message;
    EXPECT_EQ(second->binding.own, "0");
    // local order never reads the topology and binds by LOCAL_RANK.
    asked = 0;
    auto local = derive(vars, {}, {}, TableWanted::never, lookups);
    ASSERT_TRUE(local.ok()) << local.error().message;
    EXPECT_EQ(asked, 0);
    EXPECT_EQ(local->binding.own, "1");
}

TEST(TaskEnv, NetHintsAskTheRouteTowardsAnotherNode) {
    std::vector<std::string> peers;
    TaskLookups lookups;
    lookups.interface_towards = [&](const std::string& peer, std::string* why) {
        peers.push_back(peer);
        if (peer == "n1") {
            *why = "no route to n1";
            return std::optional<std::string>();
        }
        return std::optional<std::string>("ib0");
    };
    // Rank 0 is on the master's node: the route to itself says nothing, so it asks for n2's.
    auto r0 = derive(gpu_task(0), opts_of("net-hints,verbose"), {}, TableWanted::always, lookups);
    ASSERT_TRUE(r0.ok()) << r0.error().message;
    EXPECT_EQ(peers, std::vector<std::string>{"n2"});
    EXPECT_EQ(as_map(*r0)["GLOO_SOCKET_IFNAME"], "ib0");
    EXPECT_EQ(as_map(*r0)["NCCL_SOCKET_IFNAME"], "=ib0");
    // Rank 2 on n2 asks for MASTER_ADDR's; no interface: no variable, and the table says why.
    peers.clear();
    auto r2 = derive(gpu_task(2), opts_of("net-hints"), {}, TableWanted::always, lookups);
    ASSERT_TRUE(r2.ok()) << r2.error().message;
    EXPECT_EQ(peers, std::vector<std::string>{"n1"});
    EXPECT_EQ(as_map(*r2).count("GLOO_SOCKET_IFNAME"), 0u);
    EXPECT_NE(r2->table.find("no GLOO_SOCKET_IFNAME: no route to n1"), std::string::npos)
        << r2->table;
    // Without net-hints nothing is asked.
    peers.clear();
    ASSERT_TRUE(derive(gpu_task(2), {}, {}, TableWanted::never, lookups).ok());
    EXPECT_TRUE(peers.empty());
}

TEST(TaskEnv, VerboseTableRebuildsSlurmsPerTaskNarrowingForNodeMates) {
    // Rank 0 prints; Slurm narrowed its lists. Each row must show what that rank really gets.
    TaskHostFacts host;
    host.step_gpu_env = map_env(Vars{{"CUDA_VISIBLE_DEVICES", "0,1"}, {"SLURM_STEP_GPUS", "0,1"}});
    auto rows = [&](const char* tres, const char* own) {
        auto vars = gpu_task(0);
        vars["CUDA_VISIBLE_DEVICES"] = own;
        vars["SLURM_STEP_GPUS"] = own;
        vars["SLURMD_TRES_BIND"] = tres;
        auto t = derive(vars, opts_of("verbose"), host);
        EXPECT_TRUE(t.ok()) << t.error().message;
        return t.ok() ? t->table : std::string();
    };
    // --gpus-per-task=1: local rank k gets the step's k-th GPU, and --ddp shows it the node's.
    const std::string per_task = rows("gpu:per_task:1", "0");
    EXPECT_NE(per_task.find("0           0 (CUDA_VISIBLE_DEVICES=0,1, device 0)"),
              std::string::npos)
        << per_task;
    EXPECT_NE(per_task.find("1           1 (CUDA_VISIBLE_DEVICES=0,1, device 1)"),
              std::string::npos)
        << per_task;
    // --gpu-bind=map_gpu:1,0: local rank 0 gets GPU 1, local rank 1 GPU 0.
    const std::string map = rows("gpu:map_gpu:1,0", "1");
    EXPECT_NE(map.find("0           1 (CUDA_VISIBLE_DEVICES=1,0, device 0)"), std::string::npos)
        << map;
    EXPECT_NE(map.find("1           0 (CUDA_VISIBLE_DEVICES=1,0, device 1)"), std::string::npos)
        << map;
    // A rule that does not give back rank 0's own lists is not Slurm's: every row says so alike.
    const std::string unknown = rows("gpu:mask_gpu:0x2,0x1", "1");
    EXPECT_EQ(unknown.find("CUDA_VISIBLE_DEVICES="), std::string::npos) << unknown;
    std::size_t alike = 0;
    for (auto at = unknown.find("bound per task by Slurm (gpu:mask_gpu:0x2,0x1)");
         at != std::string::npos;
         at = unknown.find("bound per task by Slurm (gpu:mask_gpu:0x2,0x1)", at + 1))
        ++alike;
    EXPECT_EQ(alike, 4u) << unknown;
}

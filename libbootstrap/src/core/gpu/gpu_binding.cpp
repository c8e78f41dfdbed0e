// SPDX-License-Identifier: Apache-2.0
#include "core/gpu/gpu_binding.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <utility>

#include "core/base/numbers.hpp"
#include "core/contract/contract.hpp"
#include "core/gpu/device_list.hpp"

namespace sddp {
namespace {

constexpr int kFar = 3;  // distance of anything whose locality is unknown

// Task CPUs to GPU: same NUMA node beats same package beats elsewhere.
int task_gpu_distance(const TaskPlace& t, const GpuFact& g) {
    if (t.numa >= 0 && t.numa == g.numa) return 0;
    if (t.package >= 0 && t.package == g.package) return 1;
    return kFar;
}

// GPU to NIC: behind the same PCI switch (traffic never crosses the CPU) beats same NUMA node
// beats same package.
int gpu_nic_distance(const GpuFact& g, const NicFact& n) {
    if (!g.pci_switch.empty() && g.pci_switch == n.pci_switch) return 0;
    if (g.numa >= 0 && g.numa == n.numa) return 1;
    if (g.package >= 0 && g.package == n.package) return 2;
    return kFar;
}

std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// The facts of one list entry: by global index, else by UUID (CUDA accepts UUID prefixes).
GpuFact fact_for(const GpuTopologyFacts& facts, const DeviceId& id, int global_index) {
    if (global_index >= 0) {
        for (const auto& g : facts.gpus)
            if (g.index == global_index) return g;
    }
    const std::string uuid = lower(gpu_uuid_of(id));
    if (!uuid.empty()) {
        for (const auto& g : facts.gpus)
            if (!g.uuid.empty() && lower(g.uuid).compare(0, uuid.size(), uuid) == 0) return g;
    }
    return GpuFact{};
}

// `list` with `own` moved to position `pos`, the others in their original order.
std::vector<std::string> arrange(const std::vector<DeviceId>& list, const DeviceId& own,
                                 std::size_t pos) {
    std::vector<std::string> out;
    for (const auto& d : list)
        if (!(d == own)) out.push_back(d.text);
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(std::min(pos, out.size())), own.text);
    return out;
}

std::vector<std::string> texts(const std::vector<DeviceId>& list) {
    std::vector<std::string> out;
    for (const auto& d : list) out.push_back(d.text);
    return out;
}

bool contains(const std::vector<DeviceId>& list, const DeviceId& id) {
    return std::find(list.begin(), list.end(), id) != list.end();
}

GpuBinding unchanged(std::string why) {
    GpuBinding b;
    b.describe = std::move(why);
    return b;
}

Error too_many_tasks(int tasks, std::size_t gpus, std::string_view var, std::string_view list) {
    const std::string t = std::to_string(tasks), g = std::to_string(gpus);
    return make_error(Errc::invalid_input,
                      "gpu-bind: " + t +
                          " tasks of this step run on this node but the step has only " + g +
                          " GPU(s) there (" + std::string(var) + "=" + quote_value(list) +
                          "); NCCL cannot run two ranks on one GPU. Ask for one GPU per task "
                          "(--gpus-per-task=1, or --gres=gpu:" +
                          t + " with --ntasks-per-node=" + t + "), run at most " + g +
                          " tasks per node (--ntasks-per-node=" + g +
                          "), or add gpu-share to --ddp to share GPUs round-robin");
}

// Everything the rules need, parsed once.
struct Lists {
    std::vector<DeviceId> task;    // task-level CUDA_VISIBLE_DEVICES
    std::vector<int> task_gpus;    // task-level SLURM_STEP_GPUS (may be empty)
    std::vector<DeviceId> node;    // the step's GPUs on this node, in the task's numbering
    std::vector<int> node_global;  // global index of each `node` entry, -1 unknown
    bool node_known = false;       // `node` is the full step list
    bool narrowed = false;         // Slurm gave this task a subset
    std::size_t node_count = 0;    // step GPUs on this node (best knowledge)
};

Result<Lists> read_lists(const SlurmGpuEnv& s, std::string_view task_text,
                         std::string_view task_name) {
    Lists l;
    SDDP_TRY(task, parse_device_list(task_text, task_name));
    l.task = std::move(task);
    if (s.task_gpus) {
        SDDP_TRY(tg, parse_index_list(*s.task_gpus, "SLURM_STEP_GPUS"));
        l.task_gpus = std::move(tg);
    }
    std::vector<int> step_global;
    if (s.step_visible) {
        SDDP_TRY(sv, parse_device_list(*s.step_visible, s.visible_var + " (step)"));
        l.node = std::move(sv);
    }
    if (s.step_gpus) {
        SDDP_TRY(sg, parse_index_list(*s.step_gpus, "SLURM_STEP_GPUS (step)"));
        step_global = std::move(sg);
    }
    std::optional<std::uint64_t> on_node;
    if (s.gpus_on_node) {
        on_node = parse_decimal(*s.gpus_on_node, kMaxDevices);
        if (!on_node) {
            return make_error(
                Errc::invalid_input,
                "SLURM_GPUS_ON_NODE=" + quote_value(*s.gpus_on_node) + " is not a GPU count");
        }
    }
    if (!l.node.empty()) {
        l.node_known = true;
        l.narrowed = l.task != l.node;
        if (step_global.size() == l.node.size()) l.node_global = step_global;
    } else {
        l.node = l.task;
        l.narrowed = on_node && *on_node > l.task.size();
        l.node_known = !l.narrowed;
        if (l.task_gpus.size() == l.task.size()) l.node_global = l.task_gpus;
    }
    if (l.node_global.empty()) {
        // Without SLURM_STEP_GPUS, indices are global only where devices are not constrained;
        // UUIDs are matched by UUID later.
        for (const auto& d : l.node) l.node_global.push_back(d.ordinal);
    }
    l.node_count = l.node_known ? l.node.size() : static_cast<std::size_t>(*on_node);
    return l;
}

// Narrowed task: can it open the GPUs of its peers? Inferred where the host did not tell
// (access_from_cgroups finds the per-task cgroup where Slurm confines a task): a task whose GPUs
// are among the step's, as the step numbers them, sees the others too. The task's
// SLURM_STEP_GPUS cannot tell more: where Slurm confines a task it renumbers that list with
// CUDA_VISIBLE_DEVICES (measured under 22.05 and 26.05), and a container runtime may hand every
// task its node's first task's (pyxis with enroot's extra/50-slurm-pmi.sh hook).
DeviceAccess infer_access(const Lists& l) {
    if (!l.node_known) return DeviceAccess::unknown;
    for (const auto& d : l.task)
        if (!contains(l.node, d)) return DeviceAccess::task;
    return DeviceAccess::node;
}

// Per-process locality only where a library takes it per process: UCX_NET_DEVICES (UCX, and
// MPI/NVSHMEM over it) is read by each process on its own. NCCL's HCA list is not: NCCL ranks
// must see one list (they compare what they found), and NCCL already picks the NIC nearest each
// GPU within it; its NCCL_SOCKET_IFNAME is set per node (core/task/trainer_env.cpp).
void add_nccl_hints(const GpuBindingInput& in, const GpuFact& own, GpuBinding& b) {
    if (!in.nccl_hints || !in.topology || own.pci_bus_id.empty()) return;
    auto nearest = [&](NicKind kind) {
        std::vector<std::string> names;
        int best = kFar + 1;
        for (const auto& n : in.topology->nics) {
            if (n.kind != kind || n.name == "lo") continue;
            const int d = gpu_nic_distance(own, n);
            if (d < best) names.clear(), best = d;
            if (d == best) names.push_back(n.name);
        }
        std::sort(names.begin(), names.end());
        return names;
    };
    // UCX names an RDMA device with its port; the first port is the one cabled on HCAs with
    // one port per device (mlx5 exposes each port as a device of its own).
    if (auto hcas = nearest(NicKind::hca); !hcas.empty()) {
        std::string list;
        for (const auto& h : hcas) list += (list.empty() ? "" : ",") + h + ":1";
        b.env.push_back({"UCX_NET_DEVICES", list, true});
    }
}

}  // namespace

DeviceAccess access_from_cgroups(std::string_view text) {
    // Lines "ID:CONTROLLERS:PATH"; v1 lists a controller set per hierarchy, v2 has "0::PATH".
    const auto task_level = [](std::string_view path) {
        const auto slash = path.rfind('/');
        const auto leaf = slash == std::string_view::npos ? path : path.substr(slash + 1);
        return leaf.substr(0, 5) == "task_" && path.find("/step_") != std::string_view::npos;
    };
    bool v2_only = true;
    std::optional<std::string_view> v2_path;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        const auto first = line.find(':');
        const auto second = first == std::string_view::npos ? first : line.find(':', first + 1);
        if (second == std::string_view::npos) continue;
        const auto controllers = line.substr(first + 1, second - first - 1);
        const auto path = line.substr(second + 1);
        if (line.substr(0, first) == "0" && controllers.empty()) {
            v2_path = path;
            continue;
        }
        v2_only = false;
        std::string_view rest = controllers;
        while (!rest.empty()) {
            const auto comma = rest.find(',');
            if (rest.substr(0, comma) == "devices")
                return task_level(path) ? DeviceAccess::task : DeviceAccess::unknown;
            rest.remove_prefix(comma == std::string_view::npos ? rest.size() : comma + 1);
        }
    }
    if (v2_only && v2_path && task_level(*v2_path)) return DeviceAccess::task;
    return DeviceAccess::unknown;
}

TaskPlace place_of_cpus(const GpuTopologyFacts& facts, const std::vector<int>& cpus) {
    auto common = [&](const std::vector<int>& of_cpu) {
        int v = -1;
        for (int c : cpus) {
            if (c < 0 || static_cast<std::size_t>(c) >= of_cpu.size()) return -1;
            const int x = of_cpu[static_cast<std::size_t>(c)];
            if (x < 0 || (v >= 0 && x != v)) return -1;
            v = x;
        }
        return v;
    };
    return TaskPlace{common(facts.numa_of_cpu), common(facts.package_of_cpu)};
}

SlurmGpuEnv read_slurm_gpu_env(const EnvLookup& task_env, const EnvLookup& step_env) {
    SlurmGpuEnv s;
    const auto first_set = [&](const EnvLookup& e) -> const char* {
        if (!e) return nullptr;
        for (const char* name : kVisibleDeviceVars)
            if (e(name)) return name;
        return nullptr;
    };
    if (const char* name = first_set(task_env)) {
        s.visible_var = name;
    } else if (const char* step_name = first_set(step_env)) {
        s.visible_var = step_name;
    }
    if (task_env) {
        s.task_visible = task_env(s.visible_var);
        s.task_ordinal = task_env("GPU_DEVICE_ORDINAL");
        s.task_gpus = task_env("SLURM_STEP_GPUS");
        s.gpus_on_node = task_env("SLURM_GPUS_ON_NODE");
    }
    if (step_env) {
        s.step_visible = step_env(s.visible_var);
        s.step_gpus = step_env("SLURM_STEP_GPUS");
    }
    return s;
}

std::vector<int> assign_closest(const std::vector<GpuFact>& gpus,
                                const std::vector<TaskPlace>& places, int local_world_size) {
    std::vector<int> out;
    if (gpus.empty()) return out;
    std::vector<bool> taken(gpus.size(), false);
    std::size_t free_left = gpus.size();
    for (int t = 0; t < local_world_size; ++t) {
        if (free_left == 0) {  // sharing: start another round over all GPUs
            std::fill(taken.begin(), taken.end(), false);
            free_left = gpus.size();
        }
        const TaskPlace place = static_cast<std::size_t>(t) < places.size()
                                    ? places[static_cast<std::size_t>(t)]
                                    : TaskPlace{};
        int best = -1, best_d = kFar + 1;
        for (std::size_t g = 0; g < gpus.size(); ++g) {
            if (taken[g]) continue;
            const int d = task_gpu_distance(place, gpus[g]);
            if (d < best_d) best = static_cast<int>(g), best_d = d;
        }
        taken[static_cast<std::size_t>(best)] = true;
        --free_left;
        out.push_back(best);
    }
    return out;
}

namespace {

// Which GPU of the step's node list is this task's own, and why.
struct OwnChoice {
    std::size_t pos = 0;           // position of the own GPU in Lists::node
    bool keep_slurm_list = false;  // Slurm narrowed the task and the wider list is no use
    std::string how;               // for the description
};

OwnChoice choose_own(const GpuBindingInput& in, const Lists& l) {
    OwnChoice c;
    if (l.narrowed) {
        const DeviceId& own = l.task.front();
        const DeviceAccess access =
            in.access != DeviceAccess::unknown ? in.access : infer_access(l);
        c.keep_slurm_list = !l.node_known || access != DeviceAccess::node || !contains(l.node, own);
        c.how = "Slurm bound " + format_device_list(l.task) + " to this task";
        if (!l.node_known)
            c.how += "; the step's other GPUs are unknown here";
        else if (access != DeviceAccess::node)
            c.how += "; other GPUs are not accessible";
        if (!c.keep_slurm_list)
            c.pos = static_cast<std::size_t>(std::find(l.node.begin(), l.node.end(), own) -
                                             l.node.begin());
        return c;
    }
    const int rank = in.local_rank, tasks = in.local_world_size;
    c.pos = static_cast<std::size_t>(rank) % l.node.size();
    c.how = "own = step GPU " + std::to_string(c.pos) + " of " + std::to_string(l.node.size());
    if (in.policy != GpuBindPolicy::closest) return c;
    if (!in.topology || in.task_places.size() != static_cast<std::size_t>(tasks)) {
        c.how += " (closest: no topology or task placement known, used local order)";
        return c;
    }
    std::vector<GpuFact> facts;
    for (std::size_t i = 0; i < l.node.size(); ++i)
        facts.push_back(fact_for(*in.topology, l.node[i], l.node_global[i]));
    c.pos = static_cast<std::size_t>(
        assign_closest(facts, in.task_places, tasks)[static_cast<std::size_t>(rank)]);
    c.how = "own = step GPU " + std::to_string(c.pos) + " (nearest free to CPUs)";
    return c;
}

// The list the task sees and the own GPU's index in it.
void arrange_visible(const GpuBindingInput& in, const Lists& l, OwnChoice& c, GpuBinding& b) {
    const DeviceId& own_entry = c.keep_slurm_list ? l.task.front() : l.node[c.pos];
    if (own_entry.kind == DeviceIdKind::mig) {
        // CUDA enumerates only the first MIG instance in the list: any other index fails with
        // "invalid device ordinal", so each rank is shown its own instance alone.
        b.own = own_entry.text;
        b.visible = {own_entry.text};
        b.device_index = 0;
        c.how += "; MIG: one instance per process";
    } else if (c.keep_slurm_list) {
        b.own = l.task.front().text;
        b.visible =
            in.policy == GpuBindPolicy::single ? std::vector<std::string>{b.own} : texts(l.task);
        b.device_index = 0;
    } else if (in.policy == GpuBindPolicy::single) {
        b.own = own_entry.text;
        b.visible = {own_entry.text};
        b.device_index = 0;
    } else {
        b.own = own_entry.text;
        const std::size_t n = l.node.size();
        const auto rank = static_cast<std::size_t>(in.local_rank);
        const std::size_t at = rank < n ? rank : rank % n;
        b.visible = arrange(l.node, own_entry, at);
        b.device_index = static_cast<int>(at);
    }
}

// The variables of the binding, and the NCCL hints for the own GPU where the topology is known.
void add_binding_env(const GpuBindingInput& in, const Lists& l, GpuBinding& b) {
    const SlurmGpuEnv& s = in.slurm;
    const std::string list = format_device_list(b.visible);
    b.env.push_back({s.visible_var, list, false});
    if (s.task_ordinal) b.env.push_back({"GPU_DEVICE_ORDINAL", list, false});
    b.env.push_back({contract::kDeviceVar, std::to_string(b.device_index), false});
    // Slurm numbers GPUs in PCI bus order; CUDA's default order is "fastest first", which
    // differs on nodes with mixed GPU models.
    const bool cuda = s.visible_var == "CUDA_VISIBLE_DEVICES";
    if (cuda && l.task.front().kind == DeviceIdKind::ordinal)
        b.env.push_back({"CUDA_DEVICE_ORDER", "PCI_BUS_ID", true});
    if (!in.topology || !cuda) return;
    int global = -1;
    for (std::size_t i = 0; i < l.node.size(); ++i)
        if (l.node[i].text == b.own) global = l.node_global[i];
    if (global < 0 && l.narrowed && !l.task_gpus.empty()) global = l.task_gpus.front();
    const auto own_id = std::find_if(l.task.begin(), l.task.end(),
                                     [&](const DeviceId& d) { return d.text == b.own; });
    add_nccl_hints(
        in, fact_for(*in.topology, own_id != l.task.end() ? *own_id : DeviceId{}, global), b);
}

}  // namespace

Result<GpuBinding> bind_gpus(const GpuBindingInput& in) {
    if (in.local_world_size < 1 || in.local_rank < 0 || in.local_rank >= in.local_world_size) {
        return make_error(Errc::invalid_input,
                          "gpu-bind: local rank " + std::to_string(in.local_rank) +
                              " is not within 0.." + std::to_string(in.local_world_size - 1));
    }
    if (in.policy == GpuBindPolicy::none) return unchanged("gpu-bind=none: left to Slurm");
    const SlurmGpuEnv& s = in.slurm;
    const bool has_visible = s.task_visible.has_value();
    const std::optional<std::string>& task_text = has_visible ? s.task_visible : s.task_ordinal;
    const std::string task_name = has_visible ? s.visible_var : "GPU_DEVICE_ORDINAL";
    if (!task_text) return unchanged("gpu-bind: no GPUs in this step");
    if (!s.task_gpus && !s.gpus_on_node && !s.step_gpus) {
        // A value the user exported on a node without GPU gres: not ours to rearrange.
        return unchanged(std::string("gpu-bind: ") + task_name +
                         " was not set by Slurm; left as is");
    }
    SDDP_TRY(l, read_lists(s, *task_text, task_name));
    if (l.task.empty()) return unchanged("gpu-bind: no GPUs in this step");

    const int tasks = in.local_world_size;
    if (static_cast<std::size_t>(tasks) > l.node_count && !in.allow_share)
        return too_many_tasks(tasks, l.node_count, task_name, *task_text);

    GpuBinding b;
    b.changed = true;
    OwnChoice own = choose_own(in, l);
    arrange_visible(in, l, own, b);
    add_binding_env(in, l, b);
    b.describe = std::string("gpu-bind=") + to_string(in.policy) + ": local rank " +
                 std::to_string(in.local_rank) + "/" + std::to_string(tasks) + ", " + own.how +
                 "; " + s.visible_var + "=" + format_device_list(b.visible) + ", device " +
                 std::to_string(b.device_index) + " (GPU " + b.own + ")" +
                 (static_cast<std::size_t>(tasks) > l.node_count ? ", shared round-robin" : "");
    return b;
}

std::optional<EnvAssignment> omp_threads_assignment(std::optional<std::string_view> cpus_per_task,
                                                    std::optional<std::string_view> cpus_on_node,
                                                    int local_world_size, int bound_cpu_count) {
    if (cpus_per_task) {
        const auto v = parse_decimal(*cpus_per_task, 1u << 20);
        if (v && *v > 0) return EnvAssignment{"OMP_NUM_THREADS", std::to_string(*v), true};
    }
    std::uint64_t threads = bound_cpu_count > 0 ? static_cast<std::uint64_t>(bound_cpu_count) : 0;
    if (cpus_on_node && local_world_size > 0) {
        const auto cpus = parse_decimal(*cpus_on_node, 1u << 20);
        if (cpus && *cpus > 0) {
            const std::uint64_t share =
                std::max<std::uint64_t>(1, *cpus / static_cast<std::uint64_t>(local_world_size));
            threads = threads > 0 ? std::min(threads, share) : share;
        }
    }
    if (threads == 0) return std::nullopt;
    return EnvAssignment{"OMP_NUM_THREADS", std::to_string(threads), true};
}

}  // namespace sddp

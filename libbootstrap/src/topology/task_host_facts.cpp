// SPDX-License-Identifier: Apache-2.0
#include "topology/task_host_facts.hpp"

#include <cstdint>
#include <utility>

#include "os/host_files.hpp"
#include "os/route_probe.hpp"
#include "topology/device_access.hpp"
#include "topology/gpu_facts.hpp"

namespace sddp {

TaskHostFacts gather_task_host_facts(const EnvLookup& env, const StepFacts& facts,
                                     EnvLookup step_gpu_env) {
    TaskHostFacts host;
    host.launch = gather_launch_context(env, facts);
    host.step_gpu_env = std::move(step_gpu_env);
    return host;
}

TaskLookups host_lookups() {
    TaskLookups l;
    l.topology = [](std::string* note) -> std::optional<GpuTopologyFacts> {
        return read_node_gpu_facts({}, note);
    };
    l.task_cpus = []() -> std::optional<std::vector<int>> {
        auto cpus = read_task_cpus();
        if (!cpus) return std::nullopt;
        return std::move(*cpus);
    };
    l.interface_towards = [](const std::string& peer, std::string* why) {
        return interface_towards(peer, why);
    };
    l.port_bind_errno = [](std::uint16_t port) { return probe_port_bind(port); };
    l.device_access = [] { return read_task_device_access(); };
    return l;
}

}  // namespace sddp

// SPDX-License-Identifier: Apache-2.0
#include "topology/task_host_facts.hpp"

#include <utility>

#include "core/net_hints.hpp"
#include "os/host_files.hpp"
#include "os/route_probe.hpp"
#include "topology/device_access.hpp"
#include "topology/gpu_facts.hpp"

namespace sddp {

TaskHostFacts gather_task_host_facts(const EnvLookup& env, const StepFacts& facts,
                                     const DdpOptions& opts, EnvLookup step_gpu_env,
                                     std::string* note) {
    TaskHostFacts host;
    host.launch = gather_launch_context(env, facts);
    host.step_gpu_env = std::move(step_gpu_env);
    if (needs_topology(opts)) host.topology = read_node_gpu_facts({}, note);
    if (auto cpus = read_task_cpus()) host.task_cpus = std::move(*cpus);
    if (opts.nccl_hints.value_or(false)) {
        // The peer depends on MASTER_ADDR; a failing derivation is reported by derive_task_env.
        if (auto launch = derive_launch_env(facts, opts, host.launch)) {
            if (auto peer = net_hint_peer(facts, *launch)) {
                std::string why;
                host.gloo_ifname = interface_towards(*peer, &why);
                if (!host.gloo_ifname) host.gloo_why_not = why;
            }
        }
    }
    return host;
}

}  // namespace sddp

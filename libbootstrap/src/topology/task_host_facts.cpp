#include "topology/task_host_facts.hpp"

#include <utility>

#include "os/host_files.hpp"
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
    return host;
}

}  // namespace sddp

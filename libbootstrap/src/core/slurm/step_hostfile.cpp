// SPDX-License-Identifier: Apache-2.0
#include "core/slurm/step_hostfile.hpp"

#include <cstdint>

namespace sddp {

std::string step_hostfile_path(std::uint32_t uid, std::uint32_t job_id, std::uint32_t step_id,
                               std::uint32_t nodeid) {
    return "/tmp/slurm-ddp-hostfile." + std::to_string(uid) + "." + std::to_string(job_id) + "." +
           std::to_string(step_id) + "." + std::to_string(nodeid);
}

Result<StepHostfile> step_hostfile(const StepFacts& f, std::size_t first_node, std::uint32_t uid,
                                   std::optional<std::uint32_t> launcher_slots) {
    if (f.nodes.empty() || f.nodes.size() != f.tasks_per_node.size() ||
        first_node >= f.nodes.size()) {
        return make_error(Errc::internal, "--ddp=hostfile: the step's node list is not known");
    }
    StepHostfile out;
    out.path = step_hostfile_path(uid, f.job_id, f.step_id, f.nodeid);
    auto line = [&](std::size_t n) {
        const std::uint32_t slots = launcher_slots ? *launcher_slots : f.tasks_per_node[n];
        out.text += f.nodes[n] + " slots=" + std::to_string(slots) + "\n";
    };
    line(first_node);
    for (std::size_t n = 0; n < f.nodes.size(); ++n) {
        if (n != first_node) line(n);
    }
    return out;
}

}  // namespace sddp

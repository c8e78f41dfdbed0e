// slurmstepd, per task (task_init): derive the DDP environment and set it.
#pragma once

#include "spank_api.hpp"

namespace sddp::plugin {

int on_task_init(spank_t sp);

}  // namespace sddp::plugin

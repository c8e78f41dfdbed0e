// slurmstepd, per task (task_init): derive the DDP environment and set it.
#pragma once

#include "spank_api.hpp"

namespace sddp::plugin {

// user_init (slurmstepd, before the tasks fork): remember the step-level GPU lists.
int on_user_init(spank_t sp);
int on_task_init(spank_t sp);

}  // namespace sddp::plugin

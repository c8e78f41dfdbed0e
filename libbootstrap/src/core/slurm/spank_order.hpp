// SPDX-License-Identifier: Apache-2.0
// Whether NVIDIA's pyxis runs a step's task_init after ours, where nothing can repair it.
//
// Slurm runs every SPANK hook plugin by plugin in plugstack.conf order. pyxis's task_init starts
// the node's container from the environment the first task has at that moment and then copies the
// container's whole environment into every task, overwriting: listed after spank_ddp.so it hands
// each task the image's MASTER_ADDR/MASTER_PORT, enroot's hook values and the first task's RANK,
// LOCAL_RANK and GPU list, after the plugin has set them and with no hook of ours left to run.
// Listed before, its values are there when ours run, and task_env replaces what appeared. So a
// --ddp step in a pyxis container is refused in the wrong order, with the fix, before it starts.
//
// Both facts come from slurmstepd, not from parsing plugstack.conf (includes, globs, relative
// paths): Slurm loads the plugins in plugstack.conf order, one line after the other, before
// calling any hook, so the order of the process's loaded objects is the order of the hooks; and
// srun hands a step its SPANK options as variables that slurmstepd clears only after the
// plugins' init hook. Nothing here does I/O.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sddp {

// pyxis's SPANK plugin name (its plugin_name symbol), whatever its file is called.
inline constexpr const char* kPyxisPluginName = "pyxis";

// The variables whose presence in a step's environment, at the remote init hook, means pyxis runs
// the step in a container: --container-image or --container-name as srun hands them to
// slurmstepd (_SLURM_SPANK_OPTION_<plugin>_<option>), as sbatch exports them to a job script's
// sruns (SLURM_SPANK_ before that), and pyxis's own PYXIS_CONTAINER_IMAGE/NAME defaults.
const std::vector<std::string>& pyxis_container_variables();

// One object the process has loaded, in load order: its path and, for a SPANK plugin, its
// plugin_name (empty otherwise).
struct LoadedObject {
    std::string path;
    std::string plugin_name;
};

// The path of the first object whose plugin_name is `plugin` and that was loaded after the one at
// `self_path`; nullopt when there is none (not loaded, loaded before us, or `self_path` absent).
std::optional<std::string> plugin_loaded_after(const std::vector<LoadedObject>& objects,
                                               std::string_view self_path, std::string_view plugin);

// The one-line refusal of a --ddp step in a pyxis container whose plugins run in the wrong
// order: what goes wrong and the plugstack.conf change that fixes it.
std::string pyxis_order_error(std::string_view self_path, std::string_view pyxis_path);

}  // namespace sddp

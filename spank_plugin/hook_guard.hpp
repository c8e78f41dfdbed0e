// SPDX-License-Identifier: Apache-2.0
// The catch-all around every entry point Slurm calls (the hooks, the --ddp option's callback):
// nothing may unwind into Slurm, and only a --ddp step may fail.
#pragma once

#include <string>

#include "plugin_log.hpp"
#include "plugin_state.hpp"

namespace sddp::plugin {

template <typename F>
int guarded(const char* entry, F&& body) noexcept {
    use_slurm_log();  // every entry, whatever process and context Slurm loaded us in
    try {
        return body();
    } catch (...) {
        // Out of memory or a bug: never let it unwind into Slurm. Fail only a --ddp step.
        try {
            log_error(std::string("internal error in ") + entry);
        } catch (...) {
        }
        return ddp_requested(state()) ? -1 : 0;
    }
}

}  // namespace sddp::plugin

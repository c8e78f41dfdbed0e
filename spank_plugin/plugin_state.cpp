// SPDX-License-Identifier: Apache-2.0
#include "plugin_state.hpp"

namespace sddp::plugin {

PluginState& state() {
    static PluginState s;
    return s;
}

bool ddp_requested(const PluginState& s) {
    if (s.user_option_given) {
        // An unparsable --ddp still counts as asked for: the step must fail with the error,
        // not silently run without DDP.
        if (s.user_error) return true;
        if (s.user.enabled) return *s.user.enabled;
        return true;
    }
    return !s.site_error && s.site.enabled.value_or(false);
}

bool ddp_asked(const PluginState& s) {
    return s.user_option_given && ddp_requested(s);
}

Result<StepOptions> effective_options(const PluginState& s) {
    if (s.site_error) return *s.site_error;
    if (s.user_error) return *s.user_error;
    return merge_options(s.site, s.user);
}

}  // namespace sddp::plugin

// SPDX-License-Identifier: Apache-2.0
#include "ddp_option.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/options/options.hpp"
#include "core/options/options_help.hpp"
#include "hook_guard.hpp"
#include "hook_timer.hpp"
#include "plugin_log.hpp"
#include "plugin_state.hpp"

namespace sddp::plugin {
namespace {

// `--ddp=help` in srun, sbatch or salloc: the option table on stdout, then exit 0, as Slurm's own
// `--cpu-bind=help` does. The only place the plugin prints to stdout or exits, and only in the
// user's command (remote == 0); in slurmstepd "help" is an invalid value like any other.
void print_help_and_exit() {
    const std::string text = format_options_help(HelpFormat::text);
    (void)!std::fwrite(text.data(), 1, text.size(), stdout);
    (void)std::fflush(stdout);
    std::exit(0);
}

int parse_ddp_option(const char* optarg, int remote) {
    if (!remote && optarg != nullptr && is_help_request(optarg)) print_help_and_exit();
    auto& s = state();
    const HookTimer timer(s.times.option);
    s.user_option_given = true;
    s.user_text = optarg != nullptr ? optarg : "";
    auto parsed = parse_user_options(s.user_text);
    if (parsed) {
        s.user = std::move(*parsed);
        s.user_error.reset();
        return 0;
    }
    s.user_error = parsed.take_error();
    if (remote) return 0;  // reported in task_init, where the user sees it
    log_error(s.user_error->message);
    return -1;  // srun/sbatch refuse to launch
}

int on_ddp_option(int /*val*/, const char* optarg, int remote) noexcept {
    return guarded("the --ddp option", [&] { return parse_ddp_option(optarg, remote); });
}

// The usage is the option table's (set before the option is registered).
struct spank_option kDdpOption = {
    const_cast<char*>("ddp"),
    const_cast<char*>("[opts]"),
    nullptr,
    2,  // optional argument: --ddp or --ddp=opts
    0,
    on_ddp_option,
};

}  // namespace

int read_site_and_register_ddp(spank_t sp, int ac, char** av) {
    auto& s = state();
    std::vector<std::string> args;
    args.reserve(static_cast<std::size_t>(ac > 0 ? ac : 0));
    for (int i = 0; i < ac; ++i) args.emplace_back(av[i] != nullptr ? av[i] : "");
    auto site = parse_site_arguments(args);
    if (site) {
        s.site = std::move(*site);
    } else {
        s.site_error = site.take_error();
    }
    static const std::string usage = format_option_usage();
    kDdpOption.usage = const_cast<char*>(usage.c_str());
    if (spank_option_register(sp, &kDdpOption) != ESPANK_SUCCESS) {
        log_error("cannot register the --ddp option");
    }
    return 0;
}

}  // namespace sddp::plugin

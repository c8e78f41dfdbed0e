// SPDX-License-Identifier: Apache-2.0
// spank_plugin_host: plays srun / sbatch / slurmstepd for spank_ddp.so, without Slurm.
//
// The executable defines (and exports, -rdynamic) the spank_* and slurm_* functions the plugin
// imports, over an in-memory task environment, then loads the plugin with dlopen(RTLD_NOW) and
// drives its hooks in the order Slurm calls them:
//
//   srun (local):           init(plugin args) -> option callback(optarg, remote=0) -> init_post_opt
//                           -> local_user_init (where init_post_opt succeeded and it exists)
//   sbatch (allocator):     init -> option callback(remote=0) -> init_post_opt
//   slurmstepd (remote):    init -> option callback(remote=1) -> init_post_opt -> user_init
//                           -> task_init
//
// Every scenario loads a fresh copy of the plugin (its state is one static object), and the
// host checks return codes, the environment afterwards (byte for byte where nothing may change),
// and what the plugin logged. A crash kills the host; a signal handler first names the scenario.
//
//   spank_plugin_host PLUGIN.so [--iterations N] [--seed S] [--verbose]
//
// Exit status: 0 when every check passed, 1 otherwise, 2 on usage or load errors.
#include "host.hpp"

extern "C" {
// From the sanitizer runtimes, where linked (weak: null otherwise).
void __sanitizer_set_report_fd(void* fd) __attribute__((weak));
}

using namespace plugin_host;

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s PLUGIN.so [--iterations N] [--seed S] [--verbose]\n",
                     argv[0]);
        return 2;
    }
    g_plugin_path = argv[1];
    int iterations = 3000;
    std::uint64_t seed = 20261122;
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--iterations" && i + 1 < argc)
            iterations = std::atoi(argv[++i]);
        else if (a == "--seed" && i + 1 < argc)
            seed = std::strtoull(argv[++i], nullptr, 10);
        else if (a == "--verbose")
            g_verbose = true;
        else {
            std::fprintf(stderr, "unknown argument %s\n", a.c_str());
            return 2;
        }
    }
    for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL}) ::signal(sig, on_fatal_signal);
    // Under ASan/UBSan (scripts/test.sh asan phase) reports must not vanish into the captured
    // task stderr: send them to a copy of the real stderr.
    if (__sanitizer_set_report_fd != nullptr) {
        const int report_fd = ::dup(STDERR_FILENO);
        if (report_fd >= 0)
            __sanitizer_set_report_fd(
                reinterpret_cast<void*>(static_cast<std::uintptr_t>(report_fd)));
    }

    // Each scenario must see a fresh plugin: check that dlclose really unloads it.
    { Plugin p; }
    if (void* still = ::dlopen(g_plugin_path, RTLD_NOW | RTLD_NOLOAD)) {
        std::fprintf(stderr,
                     "spank_plugin_host: %s stays loaded after dlclose (its state would "
                     "leak between scenarios)\n",
                     g_plugin_path);
        ::dlclose(still);
        return 2;
    }

    // Slurm loads the plugin into every srun and slurmstepd: steps without --ddp, and --ddp steps
    // that never read the topology, must not bring libhwloc (and libudev) or libcrypto along.
    {
        std::vector<std::string> opened;
        g_dlopened = &opened;
        Step plain;
        plain.name = "no hwloc/libcrypto in srun and slurmstepd";
        plain.context = S_CTX_LOCAL;
        const Outcome a = run(plain);
        plain.context = S_CTX_REMOTE;
        plain.env = valid_env(1);
        const Outcome b = run(plain);
        const Outcome c =
            run(ddp_step("no hwloc/libcrypto for --ddp with gpu-bind=local", valid_env(1)));
        g_dlopened = nullptr;
        for (const auto& f : opened) {
            check(f.find("hwloc") == std::string::npos && f.find("crypto") == std::string::npos,
                  plain, c, "dlopen'ed " + f);
        }
        for (const char* lib : {"libhwloc.so.15", "libudev.so.1", "libcrypto.so.3"}) {
            void* loaded = ::dlopen(lib, RTLD_LAZY | RTLD_NOLOAD);
            check(loaded == nullptr, plain, c, std::string(lib) + " was loaded with the plugin");
            if (loaded != nullptr) ::dlclose(loaded);
        }
        check(a.post_opt == 0 && b.task_init == 0 && c.task_init == 0, plain, c, "hooks failed");
    }

    std::mt19937_64 rng(seed);
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    std::printf("spank_plugin_host: %s, seed %" PRIu64 "\n", g_plugin_path, seed);
    const std::vector<std::pair<const char*, std::function<void()>>> groups{
        {"valid --ddp steps", scenarios_valid},
        {"AMD and Intel GPUs", scenarios_gpu_kinds},
        {"steps without --ddp", [&] { scenarios_untouched(rng); }},
        {"--ddp with bad Slurm variables", [&] { scenarios_bad_slurm_env(rng); }},
        {"oversized step variable with the job's present", scenario_oversized_fallback},
        {"special steps", scenarios_special_steps},
        {"--ddp option values", scenarios_options},
        {"srun without a secret", scenarios_srun_without_secret},
        {"--ddp=debug in a shared directory", scenario_debug_dir_shared},
        {"injected values", scenarios_injected_values},
        {"site default never fails a step", scenarios_site_default_never_fails},
        {"random inputs", [&] { scenario_random(rng, iterations); }},
    };
    for (const auto& [name, fn] : groups) {
        const int before_checks = g_checks, before_fail = g_failures;
        fn();
        std::printf("%-50s %5d checks, %d failed\n", name, g_checks - before_checks,
                    g_failures - before_fail);
    }
    std::printf("spank_plugin_host: %d checks, %d failed\n", g_checks, g_failures);
    return g_failures == 0 ? 0 : 1;
}

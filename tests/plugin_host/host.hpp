// SPDX-License-Identifier: Apache-2.0
// What the parts of spank_plugin_host share: the fake Slurm's state (fake_slurm.cpp), one run of
// the plugin's hooks and the checks on its outcome (plugin_runner.cpp), the steps the scenarios
// start from, and the scenario groups (scenarios_*.cpp) that host.cpp's main runs in turn.
#pragma once

#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <regex>
#include <string>
#include <vector>

extern "C" {
#include <slurm/spank.h>

// Defined in fake_slurm.cpp, ahead of libc's in the plugin's symbol lookup.
extern std::vector<std::string>* g_dlopened;  // every file dlopen'ed, where set
extern bool g_fail_getrandom;                 // getrandom fails with ENOSYS
extern bool g_fail_setenv;                    // setenv fails with ENOMEM
}

namespace plugin_host {

// ESPANK_SUCCESS is a plain 0 (slurm_errno.h), not an enumerator.
constexpr spank_err_t kOk = static_cast<spank_err_t>(ESPANK_SUCCESS);

using Env = std::map<std::string, std::string>;

// ---------------------------------------------------------------------------------------------
// What the fake Slurm holds for one scenario.

struct Fake {
    spank_context_t context = S_CTX_REMOTE;
    bool in_init = false;
    std::optional<std::uint32_t> step_id = 3;  // nullopt: spank_get_item fails
    Env env;
    std::vector<std::string> log;       // "error: ...", "info: ...", ...
    std::vector<spank_option> options;  // registered in init
    int setenv_calls = 0;
    int bad_calls = 0;  // calls with arguments Slurm would reject (a plugin bug)
    std::vector<std::string> bad_call_notes;
};
extern Fake g;  // the fake Slurm of the scenario running

spank_t handle();

using Hook = int (*)(spank_t, int, char**);

extern const char* g_plugin_path;
extern bool g_verbose;
extern char g_current[512];  // the scenario running, for the crash handler
extern int g_capture_fd;     // the task-stderr capture while hooks run
extern int g_saved_stderr;   // the real stderr meanwhile
extern int g_checks;
extern int g_failures;

void on_fatal_signal(int sig);

struct Plugin {
    void* dl = nullptr;
    Hook init = nullptr;
    Hook init_post_opt = nullptr;
    Hook user_init = nullptr;
    Hook task_init = nullptr;
    Hook local_user_init = nullptr;  // optional
    Hook exit_hook = nullptr;        // optional

    Plugin() {
        dl = ::dlopen(g_plugin_path, RTLD_NOW | RTLD_LOCAL);
        if (dl == nullptr) {
            std::fprintf(stderr, "spank_plugin_host: dlopen(%s): %s\n", g_plugin_path, ::dlerror());
            std::exit(2);
        }
        init = reinterpret_cast<Hook>(::dlsym(dl, "slurm_spank_init"));
        init_post_opt = reinterpret_cast<Hook>(::dlsym(dl, "slurm_spank_init_post_opt"));
        user_init = reinterpret_cast<Hook>(::dlsym(dl, "slurm_spank_user_init"));
        task_init = reinterpret_cast<Hook>(::dlsym(dl, "slurm_spank_task_init"));
        local_user_init = reinterpret_cast<Hook>(::dlsym(dl, "slurm_spank_local_user_init"));
        exit_hook = reinterpret_cast<Hook>(::dlsym(dl, "slurm_spank_exit"));
        if (!init || !init_post_opt || !user_init || !task_init) {
            std::fprintf(stderr, "spank_plugin_host: %s lacks a SPANK hook\n", g_plugin_path);
            std::exit(2);
        }
    }
    ~Plugin() { ::dlclose(dl); }
    Plugin(const Plugin&) = delete;
    Plugin& operator=(const Plugin&) = delete;
};

struct Step {
    std::string name;
    spank_context_t context = S_CTX_REMOTE;
    std::vector<std::string> plugin_args;
    bool option_given = false;          // --ddp on the command line
    std::optional<std::string> optarg;  // --ddp=VALUE (nullopt: plain --ddp)
    std::optional<std::uint32_t> step_id = 3;
    Env env;
};

struct Outcome {
    int init = 0;
    std::optional<int> option;  // the option callback, where called
    int post_opt = 0;
    int local_user_init = 0;
    int user_init = 0;
    int task_init = 0;
    Env env;
    std::vector<std::string> log;
    std::string task_stderr;
    int setenv_calls = 0;
    std::optional<std::string> secret;  // SLURM_DDP_SECRET in the host's environment (srun)
    int bad_calls = 0;
    std::vector<std::string> bad_call_notes;
    int exit = 0;                              // slurm_spank_exit
    std::optional<std::string> hostfile_text;  // SLURM_DDP_HOSTFILE's content before exit
    bool hostfile_left = false;                // the file still exists after exit
};

std::optional<std::string> read_text_file(const std::string& path);
Outcome run(const Step& s);

std::string shorten(const std::string& s, std::size_t max = 300);
bool check(bool ok, const Step& s, const Outcome& o, const std::string& what);
bool logged_error_naming(const Outcome& o, const std::string& needle);
std::string get(const Env& e, const std::string& k);
std::vector<std::string> plugin_time_lines(const Outcome& o);
void expect_plugin_time(const Step& s, const Outcome& o, const std::string& who,
                        const std::vector<std::string>& hooks, const std::string& busy_hook);
std::string env_diff(const Env& before, const Env& after);
void check_common(const Step& s, const Outcome& o);
void expect_untouched(const Step& s);
void expect_task_error(const Step& s, const std::string& needle);
Outcome expect_task_ok(const Step& s);

// A valid 2-node, 4-task step as slurmstepd on n1 sees it for rank `rank`.
Env valid_env(int rank = 1);
Step ddp_step(const std::string& name, Env env);
std::string random_bytes(std::mt19937_64& rng, std::size_t n);  // NUL-free

// scenarios_valid.cpp: --ddp steps that must work.
void scenario_hostfile();
void scenario_help();
void scenarios_valid();
void scenario_debug_dir_shared();
void scenarios_gpu_kinds();
// scenarios_robust.cpp: steps the plugin must leave alone, and inputs it must refuse by name.
void scenarios_untouched(std::mt19937_64& rng);
void scenarios_bad_slurm_env(std::mt19937_64& rng);
void scenario_oversized_fallback();
void scenarios_special_steps();
void scenarios_injected_values();
void scenario_random(std::mt19937_64& rng, int iterations);
// scenarios_options.cpp: the --ddp option in srun and sbatch, and the site's defaults.
void scenarios_options();
void scenarios_srun_without_secret();
void scenarios_site_default_never_fails();

}  // namespace plugin_host

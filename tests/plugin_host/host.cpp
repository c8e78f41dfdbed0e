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
// From the sanitizer runtimes, where linked (weak: null otherwise).
void __sanitizer_set_report_fd(void* fd) __attribute__((weak));
}

namespace {

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
Fake g;

}  // namespace

struct spank_handle {
    int magic;
};

namespace {
spank_handle g_handle{0x5ddb};
spank_t handle() {
    return &g_handle;
}

void bad_call(const std::string& what) {
    ++g.bad_calls;
    g.bad_call_notes.push_back(what);
}

void add_log(const char* level, const char* fmt, va_list ap) {
    va_list copy;
    va_copy(copy, ap);
    const int n = std::vsnprintf(nullptr, 0, fmt, copy);
    va_end(copy);
    std::string text(n > 0 ? static_cast<std::size_t>(n) : 0, '\0');
    if (n > 0) std::vsnprintf(text.data(), text.size() + 1, fmt, ap);
    g.log.push_back(std::string(level) + ": " + text);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The Slurm API the plugin imports. Behaviour follows Slurm's src/common/spank.c.

extern "C" {

void slurm_error(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    add_log("error", fmt, ap);
    va_end(ap);
}
void slurm_info(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    add_log("info", fmt, ap);
    va_end(ap);
}
void slurm_verbose(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    add_log("verbose", fmt, ap);
    va_end(ap);
}
void slurm_debug(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    add_log("debug", fmt, ap);
    va_end(ap);
}

spank_context_t spank_context(void) {
    return g.context;
}

const char* spank_strerror(spank_err_t err) {
    switch (static_cast<int>(err)) {
        case ESPANK_SUCCESS:
            return "Success";
        case ESPANK_BAD_ARG:
            return "Bad argument";
        case ESPANK_ENV_EXISTS:
            return "Environment variable exists";
        case ESPANK_ENV_NOEXIST:
            return "No such environment variable";
        case ESPANK_NOSPACE:
            return "Buffer too small";
        case ESPANK_NOT_REMOTE:
            return "Valid only in remote context";
        default:
            return "Unknown error";
    }
}

spank_err_t spank_option_register(spank_t sp, struct spank_option* opt) {
    if (sp != handle() || opt == nullptr || opt->name == nullptr) {
        bad_call("spank_option_register with a bad handle or option");
        return ESPANK_BAD_ARG;
    }
    if (!g.in_init) {
        bad_call("spank_option_register outside slurm_spank_init");
        return ESPANK_BAD_ARG;
    }
    if (std::strlen(opt->name) > SPANK_OPTION_MAXLEN) {
        bad_call("option name longer than SPANK_OPTION_MAXLEN");
        return ESPANK_BAD_ARG;
    }
    g.options.push_back(*opt);
    return kOk;
}

spank_err_t spank_get_item(spank_t sp, spank_item_t item, ...) {
    if (sp != handle()) {
        bad_call("spank_get_item with a bad handle");
        return ESPANK_BAD_ARG;
    }
    if (g.context != S_CTX_REMOTE) return ESPANK_NOT_REMOTE;
    va_list ap;
    // The signature is spank.h's; an enum before the '...' is what Slurm's own spank.c reads too.
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wvarargs"
#endif
    va_start(ap, item);
#if defined(__clang__)
#pragma clang diagnostic pop
#endif
    spank_err_t rc = kOk;
    if (item == S_JOB_STEPID) {
        auto* out = va_arg(ap, std::uint32_t*);
        if (out == nullptr) {
            bad_call("spank_get_item(S_JOB_STEPID, NULL)");
            rc = ESPANK_BAD_ARG;
        } else if (!g.step_id) {
            rc = ESPANK_NOT_AVAIL;
        } else {
            *out = *g.step_id;
        }
    } else if (item == S_JOB_UID) {
        auto* out = va_arg(ap, uid_t*);
        if (out == nullptr) {
            bad_call("spank_get_item(S_JOB_UID, NULL)");
            rc = ESPANK_BAD_ARG;
        } else {
            *out = ::getuid();
        }
    } else if (item == S_JOB_ID) {
        auto* out = va_arg(ap, std::uint32_t*);
        if (out == nullptr) {
            bad_call("spank_get_item(S_JOB_ID, NULL)");
            rc = ESPANK_BAD_ARG;
        } else {
            *out = 4242;
        }
    } else if (item == S_JOB_NODEID) {
        // slurmstepd's node index in the step: what it exports to the tasks as SLURM_NODEID.
        auto* out = va_arg(ap, std::uint32_t*);
        const auto it = g.env.find("SLURM_NODEID");
        if (out == nullptr) {
            bad_call("spank_get_item(S_JOB_NODEID, NULL)");
            rc = ESPANK_BAD_ARG;
        } else {
            *out = it == g.env.end() ? 0 : static_cast<std::uint32_t>(std::stoul(it->second));
        }
    } else if (item == S_SLURM_RESTART_COUNT) {
        auto* out = va_arg(ap, std::uint32_t*);
        if (out == nullptr) {
            bad_call("spank_get_item(S_SLURM_RESTART_COUNT, NULL)");
            rc = ESPANK_BAD_ARG;
        } else {
            *out = 0;  // every job the host models is on its first run
        }
    } else {
        bad_call("spank_get_item for an item the host does not model: " +
                 std::to_string(static_cast<int>(item)));
        rc = ESPANK_BAD_ARG;
    }
    va_end(ap);
    return rc;
}

spank_err_t spank_getenv(spank_t sp, const char* var, char* buf, int len) {
    if (sp != handle() || var == nullptr || buf == nullptr || len < 0) {
        bad_call("spank_getenv with bad arguments");
        return ESPANK_BAD_ARG;
    }
    if (g.context != S_CTX_REMOTE) return ESPANK_NOT_REMOTE;
    auto it = g.env.find(var);
    if (it == g.env.end()) return ESPANK_ENV_NOEXIST;
    // strlcpy semantics, as Slurm: copy what fits, NUL-terminate, NOSPACE if truncated.
    const std::string& v = it->second;
    if (len > 0) {
        const std::size_t n = std::min<std::size_t>(v.size(), static_cast<std::size_t>(len) - 1);
        std::memcpy(buf, v.data(), n);
        buf[n] = '\0';
    }
    if (v.size() >= static_cast<std::size_t>(len)) return ESPANK_NOSPACE;
    return kOk;
}

spank_err_t spank_setenv(spank_t sp, const char* var, const char* val, int overwrite) {
    if (sp != handle() || var == nullptr || val == nullptr) {
        bad_call("spank_setenv with bad arguments");
        return ESPANK_BAD_ARG;
    }
    if (g.context != S_CTX_REMOTE) return ESPANK_NOT_REMOTE;
    ++g.setenv_calls;
    if (*var == '\0' || std::strchr(var, '=') != nullptr)
        bad_call(std::string("spank_setenv of an invalid name: ") + var);
    auto it = g.env.find(var);
    if (it != g.env.end() && overwrite == 0) return ESPANK_ENV_EXISTS;
    g.env[var] = val;
    return kOk;
}

spank_err_t spank_unsetenv(spank_t sp, const char* var) {
    if (sp != handle() || var == nullptr) {
        bad_call("spank_unsetenv with bad arguments");
        return ESPANK_BAD_ARG;
    }
    if (g.context != S_CTX_REMOTE) return ESPANK_NOT_REMOTE;
    g.env.erase(var);
    return kOk;
}

// Every file dlopen'ed in this process, in order. hwloc loads its components with dlopen, so a
// GPU-driver component (and the driver library it links) shows here even if it is unloaded again
// before task_init returns. Defined in the executable, it comes before libc's in symbol lookup.
std::vector<std::string>* g_dlopened = nullptr;
void* dlopen(const char* file, int mode) noexcept {
    using Fn = void* (*)(const char*, int);
    static const Fn real = reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, "dlopen"));
    if (file != nullptr && g_dlopened != nullptr) g_dlopened->emplace_back(file);
    return real(file, mode);
}

// Failure injection for what srun's hook needs from the system (the step secret). Defined in
// the executable, these come before libc's in the plugin's symbol lookup, as dlopen above.
bool g_fail_getrandom = false;
bool g_fail_setenv = false;
ssize_t getrandom(void* buf, size_t len, unsigned int flags) {
    if (g_fail_getrandom) {
        errno = ENOSYS;
        return -1;
    }
    return ::syscall(SYS_getrandom, buf, len, flags);
}
int setenv(const char* name, const char* value, int overwrite) noexcept {
    using Fn = int (*)(const char*, const char*, int);
    static const Fn real = reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, "setenv"));
    if (g_fail_setenv) {
        errno = ENOMEM;
        return -1;
    }
    return real(name, value, overwrite);
}

}  // extern "C"

// ---------------------------------------------------------------------------------------------
// Loading the plugin and running the hooks.

namespace {

using Hook = int (*)(spank_t, int, char**);

const char* g_plugin_path = nullptr;
bool g_verbose = false;
char g_current[512] = "(start)";  // the scenario running, for the crash handler
int g_capture_fd = -1;            // the task-stderr capture while hooks run
int g_saved_stderr = -1;          // the real stderr meanwhile

void on_fatal_signal(int sig) {
    const int out = g_saved_stderr >= 0 ? g_saved_stderr : STDERR_FILENO;
    if (g_capture_fd >= 0) {  // what the plugin wrote before dying
        const char* h = "\nspank_plugin_host: task stderr so far:\n";
        (void)!::write(out, h, std::strlen(h));
        char buf[4096];
        ssize_t n;
        ::lseek(g_capture_fd, 0, SEEK_SET);
        while ((n = ::read(g_capture_fd, buf, sizeof buf)) > 0)
            (void)!::write(out, buf, static_cast<std::size_t>(n));
    }
    const char* head = "\nspank_plugin_host: CRASH (signal) in scenario: ";
    (void)!::write(out, head, std::strlen(head));
    (void)!::write(out, g_current, std::strlen(g_current));
    (void)!::write(out, "\n", 1);
    ::signal(sig, SIG_DFL);
    ::raise(sig);
}

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

// The task's stderr (the plugin writes errors there in task_init), captured in memory.
class StderrCapture {
  public:
    StderrCapture() {
        fd_ = ::memfd_create("task-stderr", 0);
        saved_ = ::dup(STDERR_FILENO);
        if (fd_ >= 0 && saved_ >= 0) {
            ::dup2(fd_, STDERR_FILENO);
            g_capture_fd = fd_;
            g_saved_stderr = saved_;
        }
    }
    ~StderrCapture() { finish(); }
    std::string finish() {
        if (saved_ < 0) return text_;
        g_capture_fd = -1;
        g_saved_stderr = -1;
        ::dup2(saved_, STDERR_FILENO);
        ::close(saved_);
        saved_ = -1;
        if (fd_ >= 0) {
            char buf[4096];
            ::lseek(fd_, 0, SEEK_SET);
            ssize_t n;
            while ((n = ::read(fd_, buf, sizeof buf)) > 0)
                text_.append(buf, static_cast<std::size_t>(n));
            ::close(fd_);
            fd_ = -1;
        }
        return text_;
    }

  private:
    int fd_ = -1;
    int saved_ = -1;
    std::string text_;
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

std::optional<std::string> read_text_file(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "r");
    if (f == nullptr) return std::nullopt;
    std::string text;
    char buf[4096];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
    std::fclose(f);
    return text;
}

Outcome run(const Step& s) {
    std::snprintf(g_current, sizeof g_current, "%s", s.name.c_str());
    ::unsetenv("SLURM_DDP_SECRET");
    g = Fake{};
    g.context = s.context;
    g.step_id = s.step_id;
    g.env = s.env;

    Outcome o;
    {
        Plugin p;
        std::vector<char*> argv;
        std::vector<std::string> args = s.plugin_args;  // the plugin must not keep pointers
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        const int ac = static_cast<int>(args.size());
        StderrCapture cap;

        g.in_init = true;
        o.init = p.init(handle(), ac, argv.data());
        g.in_init = false;
        if (s.option_given) {
            for (const auto& opt : g.options) {
                if (std::strcmp(opt.name, "ddp") != 0 || opt.cb == nullptr) continue;
                const std::string copy = s.optarg.value_or("");
                o.option = opt.cb(opt.val, s.optarg ? copy.c_str() : nullptr,
                                  s.context == S_CTX_REMOTE ? 1 : 0);
            }
        }
        o.post_opt = p.init_post_opt(handle(), ac, argv.data());
        // srun stops when init_post_opt fails; otherwise it allocates and, just before the
        // launch, calls local_user_init.
        if (s.context == S_CTX_LOCAL && o.post_opt == 0 && p.local_user_init != nullptr)
            o.local_user_init = p.local_user_init(handle(), ac, argv.data());
        if (s.context == S_CTX_REMOTE) {
            o.user_init = p.user_init(handle(), ac, argv.data());
            o.task_init = p.task_init(handle(), ac, argv.data());
            const auto hf = g.env.find("SLURM_DDP_HOSTFILE");
            if (hf != g.env.end()) o.hostfile_text = read_text_file(hf->second);
            if (p.exit_hook != nullptr) o.exit = p.exit_hook(handle(), ac, argv.data());
            if (hf != g.env.end()) o.hostfile_left = ::access(hf->second.c_str(), F_OK) == 0;
        }
        o.task_stderr = cap.finish();
        if (const char* sec = ::getenv("SLURM_DDP_SECRET")) o.secret = sec;
        ::unsetenv("SLURM_DDP_SECRET");
    }
    o.env = std::move(g.env);
    o.log = std::move(g.log);
    o.setenv_calls = g.setenv_calls;
    o.bad_calls = g.bad_calls;
    o.bad_call_notes = std::move(g.bad_call_notes);
    if (g_verbose) {
        std::printf("  [%s] init=%d option=%s post_opt=%d user_init=%d task_init=%d\n",
                    s.name.c_str(), o.init, o.option ? std::to_string(*o.option).c_str() : "-",
                    o.post_opt, o.user_init, o.task_init);
        for (const auto& l : o.log) std::printf("    log %.300s\n", l.c_str());
    }
    return o;
}

// ---------------------------------------------------------------------------------------------
// Checks.

int g_checks = 0;
int g_failures = 0;

std::string shorten(const std::string& s, std::size_t max = 300) {
    std::string out;
    for (char c : s.substr(0, max)) {
        const auto u = static_cast<unsigned char>(c);
        if (u >= 0x20 && u < 0x7f) {
            out += c;
        } else {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02x", u);
            out += hex;
        }
    }
    if (s.size() > max) out += "...(" + std::to_string(s.size()) + " bytes)";
    return out;
}

void dump(const Outcome& o) {
    std::fprintf(stderr,
                 "    init=%d option=%s post_opt=%d user_init=%d task_init=%d setenv_calls=%d\n",
                 o.init, o.option ? std::to_string(*o.option).c_str() : "-", o.post_opt,
                 o.user_init, o.task_init, o.setenv_calls);
    for (const auto& l : o.log) std::fprintf(stderr, "    log: %s\n", shorten(l).c_str());
    if (!o.task_stderr.empty())
        std::fprintf(stderr, "    task stderr: %s\n", shorten(o.task_stderr).c_str());
}

bool check(bool ok, const Step& s, const Outcome& o, const std::string& what) {
    ++g_checks;
    if (ok) return true;
    ++g_failures;
    std::fprintf(stderr, "FAIL [%s]: %s\n", s.name.c_str(), what.c_str());
    dump(o);
    return false;
}

bool logged_error_naming(const Outcome& o, const std::string& needle) {
    for (const auto& l : o.log) {
        if (l.rfind("error: ", 0) == 0 && l.find(needle) != std::string::npos) return true;
    }
    return false;
}

std::string get(const Env& e, const std::string& k) {
    auto it = e.find(k);
    return it == e.end() ? std::string("<unset>") : it->second;
}

// The plugin's own time, one verbose line per --ddp task and per --ddp srun
// (spank_plugin/hook_timer.hpp; bench/overhead/plugin_overhead.sh parses the same format):
//   verbose: slurm-ddp: task 3: plugin time init 9 us, option 0 us, user_init 4 us,
//            task_init 80 us (total 93 us, cpu 92 us)               (one line, wrapped here)
struct PluginTime {
    std::string who;                                  // "task 3" or "srun"
    std::vector<std::pair<std::string, long>> hooks;  // in the order printed
    long total = 0;
    long cpu = 0;
};

std::vector<std::string> plugin_time_lines(const Outcome& o) {
    std::vector<std::string> lines;
    for (const auto& l : o.log)
        if (l.find("plugin time") != std::string::npos) lines.push_back(l);
    return lines;
}

std::optional<PluginTime> parse_plugin_time(const std::string& line) {
    static const std::regex whole(
        R"(verbose: slurm-ddp: (task [0-9]+|srun): plugin time )"
        R"(((?:[a-z_]+ [0-9]+ us, )*[a-z_]+ [0-9]+ us) \(total ([0-9]+) us, cpu ([0-9]+) us\))");
    static const std::regex hook(R"(([a-z_]+) ([0-9]+) us)");
    std::smatch m;
    if (!std::regex_match(line, m, whole)) return std::nullopt;
    PluginTime t;
    t.who = m[1];
    const std::string hooks = m[2];
    for (std::sregex_iterator it(hooks.begin(), hooks.end(), hook), end; it != end; ++it)
        t.hooks.emplace_back((*it)[1], std::stol((*it)[2]));
    t.total = std::stol(m[3]);
    t.cpu = std::stol(m[4]);
    return t;
}

// Exactly one well-formed timing line from `who` naming `hooks` in order, with plausible values:
// the hook that does the work (`busy_hook`; empty: all of them together) took at least 1 us,
// nothing took 10 s, total is the sum of the printed values, and CPU time is not more than wall
// time (give or take the rounding down of each printed value, and clock granularity).
void expect_plugin_time(const Step& s, const Outcome& o, const std::string& who,
                        const std::vector<std::string>& hooks, const std::string& busy_hook) {
    const auto lines = plugin_time_lines(o);
    if (!check(lines.size() == 1, s, o,
               "expected one 'plugin time' line, got " + std::to_string(lines.size())))
        return;
    const auto t = parse_plugin_time(lines[0]);
    if (!check(t.has_value(), s, o, "malformed timing line: " + shorten(lines[0]))) return;
    check(t->who == who, s, o, "timing line names '" + t->who + "', expected '" + who + "'");
    std::vector<std::string> names;
    long sum = 0, busy = -1;
    bool sane = true;
    for (const auto& [name, us] : t->hooks) {
        names.push_back(name);
        sum += us;
        if (name == busy_hook || busy_hook.empty()) busy = std::max(busy, 0L) + us;
        sane = sane && us < 10'000'000;
    }
    check(names == hooks, s, o, "timing line names other hooks: " + shorten(lines[0]));
    check(busy >= 1 && sane, s, o, "implausible hook times: " + shorten(lines[0]));
    check(t->total == sum, s, o, "total is not the sum of the hooks: " + shorten(lines[0]));
    check(t->cpu <= t->total + t->total / 20 + static_cast<long>(hooks.size()) + 50, s, o,
          "CPU time above wall time: " + shorten(lines[0]));
}

std::string env_diff(const Env& before, const Env& after) {
    std::string d;
    for (const auto& [k, v] : after) {
        auto it = before.find(k);
        if (it == before.end())
            d += " +" + shorten(k, 40) + "=" + shorten(v, 40);
        else if (it->second != v)
            d += " ~" + shorten(k, 40);
    }
    for (const auto& [k, v] : before)
        if (!after.count(k)) d += " -" + shorten(k, 40);
    return d;
}

// Properties every run must have, whatever the scenario.
void check_common(const Step& s, const Outcome& o) {
    check(o.init == 0, s, o, "slurm_spank_init must never fail");
    check(o.user_init == 0, s, o, "slurm_spank_user_init must never fail");
    check(o.local_user_init == 0, s, o, "slurm_spank_local_user_init must never fail");
    check(o.exit == 0, s, o, "slurm_spank_exit must never fail");
    check(o.bad_calls == 0, s, o,
          "the plugin called the Slurm API with bad arguments: " +
              (o.bad_call_notes.empty() ? std::string() : o.bad_call_notes.front()));
    for (const auto& l : o.log) {
        // A log line is one short message, not a dump of the user's environment.
        if (!check(l.size() < 8192, s, o, "log line of " + std::to_string(l.size()) + " bytes"))
            break;
    }
    check(o.task_stderr.size() < 16384, s, o,
          "task stderr of " + std::to_string(o.task_stderr.size()) + " bytes");
}

// A step the plugin must leave alone: every hook returns 0, the environment is byte-identical.
void expect_untouched(const Step& s) {
    const Outcome o = run(s);
    check_common(s, o);
    check(!o.option || *o.option == 0, s, o, "option callback failed");
    check(o.post_opt == 0, s, o, "init_post_opt failed for an untouched step");
    check(o.task_init == 0, s, o, "task_init failed for an untouched step");
    check(o.env == s.env, s, o, "environment changed:" + env_diff(s.env, o.env));
    check(o.setenv_calls == 0, s, o, "spank_setenv called");
    // srun makes the secret for every step the user did not turn off, since the compute nodes'
    // plugstack decides whether it gets --ddp; task_init then drops it (see below).
    const bool turned_off = s.option_given && s.optarg && *s.optarg == "off";
    if (s.context == S_CTX_LOCAL && !turned_off) {
        check(o.secret && o.secret->size() == 64, s, o, "srun made no secret for the step");
    } else {
        check(!o.secret, s, o, "SLURM_DDP_SECRET set in srun for an untouched step");
    }
    check(o.task_stderr.empty(), s, o, "wrote to the task's stderr");
    check(plugin_time_lines(o).empty(), s, o, "logged its time for a step without --ddp");
}

// A --ddp task that must fail: task_init -1, the error names `needle`, environment unchanged.
void expect_task_error(const Step& s, const std::string& needle) {
    const Outcome o = run(s);
    check_common(s, o);
    check(o.task_init == -1, s, o, "task_init must return -1");
    check(logged_error_naming(o, needle), s, o, "no slurm_error naming '" + needle + "'");
    check(o.task_stderr.find(needle) != std::string::npos, s, o,
          "the task's stderr does not name '" + needle + "'");
    check(o.env == s.env, s, o, "environment changed on failure:" + env_diff(s.env, o.env));
}

// A --ddp task that must succeed; returns the outcome for more checks.
Outcome expect_task_ok(const Step& s) {
    const Outcome o = run(s);
    check_common(s, o);
    check(!o.option || *o.option == 0, s, o, "option callback failed");
    check(o.post_opt == 0, s, o, "init_post_opt failed");
    check(o.task_init == 0, s, o, "task_init must return 0");
    for (const char* v : {"RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"})
        check(o.env.count(v) == 1, s, o, std::string(v) + " not set");
    for (const auto& [k, v] : s.env) {
        auto it = o.env.find(k);
        // The plugin adds variables; it may not remove Slurm's. (It sets only the ones it owns.)
        check(it != o.env.end(), s, o, "removed " + k);
    }
    expect_plugin_time(s, o, "task " + get(o.env, "RANK"),
                       {"init", "option", "user_init", "task_init"}, "task_init");
    return o;
}

// ---------------------------------------------------------------------------------------------
// Scenarios.

// A valid 2-node, 4-task step as slurmstepd on n1 sees it for rank `rank`.
Env valid_env(int rank = 1) {
    const int node = rank / 2;
    return Env{
        {"SLURM_JOB_ID", "4242"},
        {"SLURM_STEP_ID", "3"},
        {"SLURM_STEPID", "3"},
        {"SLURM_STEP_NUM_TASKS", "4"},
        {"SLURM_NTASKS", "4"},
        {"SLURM_STEP_NUM_NODES", "2"},
        {"SLURM_NNODES", "2"},
        {"SLURM_PROCID", std::to_string(rank)},
        {"SLURM_LOCALID", std::to_string(rank % 2)},
        {"SLURM_NODEID", std::to_string(node)},
        {"SLURM_STEP_NODELIST", "n[1-2]"},
        {"SLURM_NODELIST", "n[1-2]"},
        {"SLURM_JOB_NODELIST", "n[1-2]"},
        {"SLURM_STEP_TASKS_PER_NODE", "2(x2)"},
        {"SLURM_TASKS_PER_NODE", "2(x2)"},
        {"SLURMD_NODENAME", node == 0 ? "n1" : "n2"},
        {"SLURM_DISTRIBUTION", "block"},
        {"PATH", "/usr/bin:/bin"},
        {"HOME", "/home/user"},
    };
}

Step ddp_step(const std::string& name, Env env) {
    Step s;
    s.name = name;
    s.option_given = true;
    s.env = std::move(env);
    return s;
}

std::string random_bytes(std::mt19937_64& rng, std::size_t n) {  // NUL-free
    std::string s(n, '\0');
    for (auto& c : s) c = static_cast<char>(1 + rng() % 255);
    return s;
}

// --ddp=hostfile: the file exists with the step's nodes while the task starts, and is gone after
// slurm_spank_exit; a second task of the node accepts the first one's file.
void scenario_hostfile() {
    // valid_env(3): rank 3 runs on the step's second node (SLURM_NODEID=1).
    const std::string path = "/tmp/slurm-ddp-hostfile." + std::to_string(::getuid()) + ".4242.3.1";
    ::unlink(path.c_str());
    Step s = ddp_step("valid --ddp=hostfile", valid_env(3));
    s.optarg = "hostfile";
    auto o = expect_task_ok(s);
    check(get(o.env, "SLURM_DDP_HOSTFILE") == path, s, o,
          "SLURM_DDP_HOSTFILE=" + get(o.env, "SLURM_DDP_HOSTFILE"));
    check(o.hostfile_text == std::optional<std::string>("n1 slots=2\nn2 slots=2\n"), s, o,
          "host file text '" + o.hostfile_text.value_or("<none>") + "'");
    check(!o.hostfile_left, s, o, "slurm_spank_exit left " + path);
    // A file someone else put there first (other text) is refused, never used.
    if (std::FILE* f = std::fopen(path.c_str(), "w")) {
        std::fputs("evil slots=99\n", f);
        std::fclose(f);
    }
    Step planted = ddp_step("--ddp=hostfile over a planted file", valid_env(3));
    planted.optarg = "hostfile";
    expect_task_error(planted, "is not this step's host file");
    ::unlink(path.c_str());
}

// `--ddp=help` in srun prints the table on stdout and exits 0 (in a child: it ends the process);
// in slurmstepd "help" is an invalid value, reported by task_init.
void scenario_help() {
    int pipefd[2];
    if (::pipe(pipefd) != 0) return;
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(pipefd[1], STDOUT_FILENO);
        ::close(pipefd[0]);
        Step s = ddp_step("--ddp=help in srun", valid_env(0));
        s.context = S_CTX_LOCAL;
        s.optarg = "help";
        (void)run(s);
        ::_exit(42);  // not reached when the plugin exits
    }
    ::close(pipefd[1]);
    std::string out;
    char buf[4096];
    ssize_t n = 0;
    while ((n = ::read(pipefd[0], buf, sizeof buf)) > 0)
        out.append(buf, static_cast<std::size_t>(n));
    ::close(pipefd[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    Step s = ddp_step("--ddp=help in srun", valid_env(0));
    const Outcome none;
    check(WIFEXITED(status) && WEXITSTATUS(status) == 0, s, none,
          "srun --ddp=help did not exit 0 (status " + std::to_string(status) + ")");
    for (const char* needle : {"gpu-bind=local|single|closest|none", "TF_CONFIG", "hostfile",
                               "[site only: plugstack.conf]"}) {
        check(out.find(needle) != std::string::npos, s, none,
              std::string("--ddp=help does not print ") + needle);
    }
    Step remote = ddp_step("--ddp=help in slurmstepd", valid_env(0));
    remote.optarg = "help";
    expect_task_error(remote, "'help'");
}

void scenarios_valid() {
    scenario_hostfile();
    scenario_help();
    {  // (a) plain --ddp, rank 1 on n1
        auto o = expect_task_ok(ddp_step("valid rank 1 of 4", valid_env(1)));
        Step s = ddp_step("valid rank 1 of 4 (values)", valid_env(1));
        check(get(o.env, "RANK") == "1", s, o, "RANK=" + get(o.env, "RANK"));
        check(get(o.env, "WORLD_SIZE") == "4", s, o, "WORLD_SIZE");
        check(get(o.env, "LOCAL_RANK") == "1", s, o, "LOCAL_RANK");
        check(get(o.env, "MASTER_ADDR") == "n1", s, o, "MASTER_ADDR=" + get(o.env, "MASTER_ADDR"));
        const std::string port = get(o.env, "MASTER_PORT");
        const long p = std::strtol(port.c_str(), nullptr, 10);
        check(p >= 1024 && p <= 65535 && std::to_string(p) == port, s, o, "MASTER_PORT=" + port);
        check(o.task_stderr.empty(), s, o, "stderr not empty for a good step");
    }
    {  // rank 0 on n1, rank 3 on n2: same port for the whole step
        auto o0 = expect_task_ok(ddp_step("valid rank 0", valid_env(0)));
        auto o3 = expect_task_ok(ddp_step("valid rank 3", valid_env(3)));
        Step s = ddp_step("valid ranks agree", valid_env(3));
        check(get(o0.env, "MASTER_PORT") == get(o3.env, "MASTER_PORT"), s, o3,
              "ranks 0 and 3 disagree on MASTER_PORT");
        check(get(o3.env, "RANK") == "3" && get(o3.env, "MASTER_ADDR") == "n1", s, o3,
              "rank 3 values");
    }
    {  // --ddp=port=29533
        Step s = ddp_step("valid --ddp=port=29533", valid_env(2));
        s.optarg = "port=29533";
        auto o = expect_task_ok(s);
        check(get(o.env, "MASTER_PORT") == "29533", s, o,
              "MASTER_PORT=" + get(o.env, "MASTER_PORT"));
    }
    {  // the user's exported MASTER_PORT is kept
        Env e = valid_env(1);
        e["MASTER_PORT"] = "31000";
        auto o = expect_task_ok(ddp_step("valid, user MASTER_PORT kept", e));
        Step s = ddp_step("valid, user MASTER_PORT kept", e);
        check(get(o.env, "MASTER_PORT") == "31000", s, o, "MASTER_PORT overwritten");
    }
    {  // odd but valid node names: dots and dashes
        Env e = valid_env(0);
        e["SLURM_STEP_NODELIST"] = e["SLURM_NODELIST"] =
            "gpu-a.rack-1.example.org,gpu-b.rack-1.example.org";
        e["SLURMD_NODENAME"] = "gpu-a.rack-1.example.org";
        auto o = expect_task_ok(ddp_step("valid odd node names", e));
        Step s = ddp_step("valid odd node names", e);
        check(get(o.env, "MASTER_ADDR") == "gpu-a.rack-1.example.org", s, o,
              "MASTER_ADDR=" + get(o.env, "MASTER_ADDR"));
    }
    {  // exported but empty: empty means unset, the task gets the derived values
        const auto derived = expect_task_ok(ddp_step("valid rank 1 (reference)", valid_env(1)));
        Env e = valid_env(1);
        e["MASTER_PORT"] = "";
        e["MASTER_ADDR"] = "";
        e["OMP_NUM_THREADS"] = "";
        Step s = ddp_step("valid, exported empty MASTER_PORT/MASTER_ADDR/OMP_NUM_THREADS", e);
        auto o = expect_task_ok(s);
        check(get(o.env, "MASTER_PORT") == get(derived.env, "MASTER_PORT"), s, o,
              "MASTER_PORT='" + get(o.env, "MASTER_PORT") + "', derived '" +
                  get(derived.env, "MASTER_PORT") + "'");
        check(get(o.env, "MASTER_ADDR") == "n1", s, o,
              "MASTER_ADDR='" + get(o.env, "MASTER_ADDR") + "'");
        check(!get(o.env, "OMP_NUM_THREADS").empty(), s, o, "OMP_NUM_THREADS left empty");
    }
    {  // gpu-bind=closest reads the topology with hwloc: no GPU-driver component may load
        std::vector<std::string> opened;
        g_dlopened = &opened;
        Step s = ddp_step("valid --ddp=gpu-bind=closest loads no GPU driver", valid_env(1));
        s.optarg = "gpu-bind=closest";
        auto o = expect_task_ok(s);
        g_dlopened = nullptr;
        bool hwloc_ran = false;
        for (const auto& f : opened) {
            if (f.find("/hwloc/hwloc_") != std::string::npos) hwloc_ran = true;
            for (const char* bad : {"hwloc_cuda", "hwloc_nvml", "hwloc_opencl", "hwloc_rsmi",
                                    "hwloc_levelzero", "hwloc_gl", "libcuda", "libnvidia-ml",
                                    "libOpenCL", "librocm_smi", "libze_loader"}) {
                check(f.find(bad) == std::string::npos, s, o, "task_init dlopen'ed " + f);
            }
        }
        // The check means something only where hwloc loads components from plugins.
        if (!hwloc_ran) std::printf("  note: hwloc loaded no plugin; GPU-driver check vacuous\n");
        // The plugin loads libhwloc on first use (it is not linked).
        check(std::find(opened.begin(), opened.end(), "libhwloc.so.15") != opened.end(), s, o,
              "gpu-bind=closest did not load libhwloc");
    }
    {  // site default=on, no --ddp: the step gets DDP
        Step s;
        s.name = "site default=on without --ddp";
        s.plugin_args = {"default=on"};
        s.env = valid_env(1);
        s.env["SLURM_DDP_SECRET"] = std::string(64, 'a');
        expect_task_ok(s);
    }
    {  // 1-node 1-task step, SLURM_STEP_* absent: falls back to the job's variables
        Env e{{"SLURM_JOB_ID", "7"},      {"SLURM_STEPID", "0"},      {"SLURM_NTASKS", "1"},
              {"SLURM_NNODES", "1"},      {"SLURM_PROCID", "0"},      {"SLURM_LOCALID", "0"},
              {"SLURM_NODEID", "0"},      {"SLURM_NODELIST", "solo"}, {"SLURM_TASKS_PER_NODE", "1"},
              {"SLURMD_NODENAME", "solo"}};
        Step s = ddp_step("valid, job variables only", e);
        s.step_id = 0;
        auto o = expect_task_ok(s);
        check(get(o.env, "WORLD_SIZE") == "1" && get(o.env, "MASTER_ADDR") == "solo", s, o,
              "values");
    }
}

// (b) steps without --ddp: nothing happens whatever the environment or plugin arguments.
void scenarios_untouched(std::mt19937_64& rng) {
    const std::vector<std::vector<std::string>> plugin_args{
        {},
        {"junk"},
        {"port=0", "gpu-bind=sideways", "=", "==", ""},
        {"default=maybe"},
        {"port-range=9-1"},
        {std::string(1 << 20, 'x')},                 // one 1 MiB argument
        std::vector<std::string>(20000, "verbose"),  // many arguments
        {random_bytes(rng, 4096)},
        {"default=on", "default=off", "default=on"},  // contradictory: an error, not on
        {"default=on", "port=70000"},                 // invalid: never turns DDP on
    };
    std::vector<Env> envs{
        {},
        valid_env(1),
        {{"SLURM_PROCID", "abc"}, {"SLURM_STEP_NODELIST", "a[0-999999999]"}},
        {{"SLURM_PROCID", std::to_string(1ull << 40)},
         {"SLURM_STEP_TASKS_PER_NODE", "2(x"},
         {"MASTER_PORT", "not-a-port"}},
        {{"SLURM_STEP_NODELIST", std::string(1 << 20, 'n')}},
        {{"SLURM_JOB_ID", random_bytes(rng, 300)},
         {"SLURM_STEP_NODELIST", random_bytes(rng, 5000)}},
    };
    int n = 0;
    for (const auto& args : plugin_args) {
        for (const auto& env : envs) {
            for (auto ctx : {S_CTX_REMOTE, S_CTX_LOCAL, S_CTX_ALLOCATOR}) {
                Step s;
                s.name = "untouched #" + std::to_string(n++) + " ctx=" + std::to_string(ctx) +
                         " args[0]=" + (args.empty() ? "" : shorten(args[0], 30));
                s.context = ctx;
                s.plugin_args = args;
                s.env = env;
                expect_untouched(s);
            }
        }
    }
    {  // --ddp=off
        Step s = ddp_step("--ddp=off", valid_env(1));
        s.optarg = "off";
        expect_untouched(s);
        s.name = "--ddp=off over site default=on";
        s.plugin_args = {"default=on"};
        expect_untouched(s);
    }
    {  // srun made a secret in case this node's plugstack turns --ddp on; it does not here
        Step s;
        s.name = "secret from srun, no --ddp on this node";
        s.env = valid_env(1);
        s.env["SLURM_DDP_SECRET"] = std::string(64, 'a');
        const Outcome o = run(s);
        check_common(s, o);
        Env want = s.env;
        want.erase("SLURM_DDP_SECRET");
        check(o.task_init == 0 && o.env == want, s, o,
              "the secret must be dropped from a step without --ddp:" + env_diff(want, o.env));
        // Where this node's plugstack says default=on, the step gets --ddp and keeps it.
        s.name = "secret from srun, default=on on this node";
        s.plugin_args = {"default=on"};
        const Outcome on = run(s);
        check(on.task_init == 0 && on.env.count("SLURM_DDP_SECRET") == 1 &&
                  on.env.at("SLURM_DDP_SECRET") == std::string(64, 'a'),
              s, on, "a --ddp step lost its secret");
    }
    {  // other contexts (slurmd, prolog/epilog, error): nothing at all, even with --ddp
        for (auto ctx : {S_CTX_SLURMD, S_CTX_JOB_SCRIPT, S_CTX_ERROR}) {
            Step s = ddp_step("--ddp in context " + std::to_string(ctx), valid_env(1));
            s.context = ctx;
            const Outcome o = run(s);
            check_common(s, o);
            check(o.post_opt == 0 && o.task_init == 0 && o.env == s.env, s, o, "touched");
            check(g.options.empty(), s, o, "registered an option in a context without options");
        }
    }
}

// (c) --ddp steps with malformed, missing or oversized Slurm variables.
void scenarios_bad_slurm_env(std::mt19937_64& rng) {
    struct Case {
        std::string var;
        std::optional<std::string> value;  // nullopt: unset
        std::string needle;                // what the error must name
    };
    const std::string big(1 << 20, '7');
    std::vector<Case> cases{
        {"SLURM_PROCID", "abc", "SLURM_PROCID"},
        {"SLURM_PROCID", "-1", "SLURM_PROCID"},
        {"SLURM_PROCID", std::to_string(1ull << 40), "SLURM_PROCID"},
        {"SLURM_PROCID", "4", "SLURM_PROCID"},
        {"SLURM_PROCID", "", "SLURM_PROCID"},
        {"SLURM_PROCID", " 1", "SLURM_PROCID"},
        {"SLURM_PROCID", "0x1", "SLURM_PROCID"},
        {"SLURM_PROCID", "1.0", "SLURM_PROCID"},
        {"SLURM_PROCID", "99999999999999999999999999999999", "SLURM_PROCID"},
        {"SLURM_PROCID", std::nullopt, "SLURM_PROCID"},
        {"SLURM_PROCID", std::string((1 << 20) - 1, '1'), "SLURM_PROCID"},
        {"SLURM_LOCALID", "2", "SLURM_LOCALID"},
        {"SLURM_NODEID", "2", "SLURM_NODEID"},
        {"SLURM_NODEID", std::nullopt, "SLURM_NODEID"},
        {"SLURM_JOB_ID", std::nullopt, "SLURM_JOB_ID"},
        {"SLURM_JOB_ID", "4294967296", "SLURM_JOB_ID"},
        {"SLURM_STEP_NUM_TASKS", "0", "SLURM_STEP_NUM_TASKS"},
        {"SLURM_STEP_NUM_TASKS", "16777217", "SLURM_STEP_NUM_TASKS"},
        {"SLURM_STEP_NUM_NODES", "3", "SLURM_STEP_NODELIST"},
        {"SLURM_STEP_NODELIST", "a[0-999999999]", "SLURM_STEP_NODELIST"},
        {"SLURM_STEP_NODELIST", "n[1-2", "SLURM_STEP_NODELIST"},
        {"SLURM_STEP_NODELIST", "n[2-1]", "SLURM_STEP_NODELIST"},
        {"SLURM_STEP_NODELIST", "n1,,n2", "SLURM_STEP_NODELIST"},
        {"SLURM_STEP_NODELIST", "n]1[,n2", "SLURM_STEP_NODELIST"},
        {"SLURM_STEP_NODELIST", "n[1-2][3-4]", "SLURM_STEP_NODELIST"},
        {"SLURM_STEP_NODELIST", "n1", "SLURM_STEP_NODELIST"},
        {"SLURM_STEP_NODELIST", "n[1-3]", "SLURM_STEP_NODELIST"},
        {"SLURM_STEP_NODELIST", "n[" + std::string(100000, '1') + "-2]", "SLURM_STEP_NODELIST"},
        {"SLURM_STEP_NODELIST", std::string((1 << 20) - 1, 'n'), "SLURM_STEP_NODELIST"},
        {"SLURM_STEP_TASKS_PER_NODE", "2(x", "SLURM_STEP_TASKS_PER_NODE"},
        {"SLURM_STEP_TASKS_PER_NODE", "2(x0)", "SLURM_STEP_TASKS_PER_NODE"},
        {"SLURM_STEP_TASKS_PER_NODE", "abc", "SLURM_STEP_TASKS_PER_NODE"},
        {"SLURM_STEP_TASKS_PER_NODE", "2(x4294967296)", "SLURM_STEP_TASKS_PER_NODE"},
        {"SLURM_STEP_TASKS_PER_NODE", "-1,5", "SLURM_STEP_TASKS_PER_NODE"},
        {"SLURM_STEP_TASKS_PER_NODE", "1,3", "SLURM_STEP_TASKS_PER_NODE"},  // LOCALID 1 on node 0
        {"SLURM_STEP_TASKS_PER_NODE", "2(x3)", "SLURM_STEP_TASKS_PER_NODE"},
        {"SLURM_STEP_TASKS_PER_NODE", "4294967295,4294967295", "SLURM_STEP_TASKS_PER_NODE"},
        {"SLURM_HET_SIZE", "junk", "SLURM_HET_SIZE"},
        {"SLURM_HET_SIZE", "129", "SLURM_HET_SIZE"},
        {"SLURM_DIST_PLANESIZE", "junk", "SLURM_DIST_PLANESIZE"},
        {"SLURM_CPUS_PER_TASK", "-3", "SLURM_CPUS_PER_TASK"},
        {"MASTER_PORT", "not-a-port", "MASTER_PORT"},
        {"MASTER_PORT", "0", "MASTER_PORT"},
        {"MASTER_PORT", "65536", "MASTER_PORT"},
    };
    for (const char* var : {"SLURM_PROCID", "SLURM_STEP_NODELIST", "SLURM_STEP_TASKS_PER_NODE",
                            "SLURM_STEP_NUM_TASKS", "SLURM_LOCALID"}) {
        for (std::size_t len : {1u, 17u, 300u, 70000u}) {
            cases.push_back({var, random_bytes(rng, len), var});
        }
    }
    for (const auto& c : cases) {
        Env e = valid_env(1);
        if (c.value)
            e[c.var] = *c.value;
        else
            e.erase(c.var);
        // Without a usable step value Slurm's job value is used; make it wrong too, so that the
        // step cannot succeed by falling back (the fallback itself is covered below).
        expect_task_error(ddp_step(c.var + "=" + (c.value ? shorten(*c.value, 40) : "<unset>"), e),
                          c.needle);
    }
    // rank 0 whose node is not the first of the node list: every other rank would wait forever
    {
        Env e = valid_env(0);
        e["SLURMD_NODENAME"] = "n2";
        expect_task_error(ddp_step("rank 0 on the wrong node", e), "rank 0 runs on node");
    }
    {  // nothing at all in the environment
        expect_task_error(ddp_step("empty environment", Env{}), "SLURM_JOB_ID");
    }
    // The step's variable unreadable (too long for the plugin's 1 MiB cap) and the job's absent:
    // the error must still say which variable.
    {
        Env e = valid_env(1);
        e["SLURM_STEP_NODELIST"] = big;
        e.erase("SLURM_NODELIST");
        e.erase("SLURM_JOB_NODELIST");
        // "SLURM_STEP_NODELIST", not "NODELIST": the old message, "SLURM_NODELIST is not set",
        // named the job's variable after treating the oversized one as absent.
        expect_task_error(ddp_step("SLURM_STEP_NODELIST of 1 MiB, no job list", e),
                          "SLURM_STEP_NODELIST");
    }
}

// The oversized step variable with the job's list present: refused naming the step variable.
// A value over the plugin's 1 MiB read cap once read as "absent", so the step silently ran with
// the job's node list (task_init 0); that fallback is the regression this checks for.
void scenario_oversized_fallback() {
    Env e = valid_env(1);
    e["SLURM_STEP_NODELIST"] = std::string(1 << 20, 'n');
    Step s = ddp_step("SLURM_STEP_NODELIST of 1 MiB, job list present", e);
    const Outcome o = run(s);
    check_common(s, o);
    check(o.task_init == -1, s, o,
          "task_init must refuse an oversized SLURM_STEP_NODELIST, not fall back to "
          "SLURM_NODELIST (MASTER_ADDR=" +
              get(o.env, "MASTER_ADDR") + ")");
    check(logged_error_naming(o, "SLURM_STEP_NODELIST"), s, o,
          "no error naming SLURM_STEP_NODELIST");
    check(logged_error_naming(o, "longer than 1 MiB"), s, o,
          "the error does not say the value is longer than 1 MiB");
    check(o.env == s.env, s, o, "environment changed on failure:" + env_diff(s.env, o.env));
}

// (d) special steps: untouched even with --ddp.
void scenarios_special_steps() {
    const std::vector<std::pair<std::string, std::uint32_t>> ids{
        {"batch", 0xfffffffbu},   {"extern", 0xfffffffcu},        {"interactive", 0xfffffffau},
        {"pending", 0xfffffffdu}, {"first special", 0xfffffff0u}, {"max", 0xffffffffu}};
    for (const auto& [name, id] : ids) {
        Env e = valid_env(1);
        e["SLURM_STEP_ID"] = e["SLURM_STEPID"] = std::to_string(id);
        Step s = ddp_step(name + " step with --ddp", e);
        s.step_id = id;
        expect_untouched(s);
        s.name = name + " step with --ddp and a broken environment";
        s.env["SLURM_PROCID"] = "abc";
        expect_untouched(s);
    }
    {  // spank_get_item(S_JOB_STEPID) fails: treated as a step not to touch
        Step s = ddp_step("step id unavailable", valid_env(1));
        s.step_id = std::nullopt;
        expect_untouched(s);
    }
    // srun makes a secret for every step, the interactive one (salloc's `srun --interactive`)
    // too: a step the plugin does not set up must not keep it in the user's shell.
    for (const auto& [name, id] : ids) {
        for (const bool with_ddp : {false, true}) {
            Env e = valid_env(1);
            e["SLURM_STEP_ID"] = e["SLURM_STEPID"] = std::to_string(id);
            e["SLURM_DDP_SECRET"] = std::string(64, 'a');
            Step s = ddp_step(name + " step keeps no secret" + (with_ddp ? " (--ddp)" : ""), e);
            s.option_given = with_ddp;
            s.plugin_args = {"default=on"};
            s.step_id = id;
            const Outcome o = run(s);
            check_common(s, o);
            Env want = e;
            want.erase("SLURM_DDP_SECRET");
            check(o.task_init == 0 && o.env == want, s, o,
                  "the secret must be dropped, nothing else changed:" + env_diff(want, o.env));
        }
    }
}

// (e) the --ddp option in srun/sbatch: bad values refuse the launch; good ones make a secret.
void scenarios_options() {
    const std::vector<std::string> bad{"port=0",
                                       "port=abc",
                                       "port=65536",
                                       "port=",
                                       "bogus",
                                       "on,off",
                                       "=",
                                       ",,,",
                                       "gpu-bind=sideways",
                                       "timeout=-1",
                                       "addr",
                                       "addr=a,addr-suffix=b",
                                       "port=1,port-range=1-2",
                                       std::string(1 << 20, 'x'),
                                       "verbose=maybe",
                                       "default=on",
                                       std::string("port=1\n2"),
                                       "\x01\x02\xff"};
    for (auto ctx : {S_CTX_LOCAL, S_CTX_ALLOCATOR}) {
        for (const auto& v : bad) {
            Step s;
            s.name = "bad optarg '" + shorten(v, 30) + "' ctx=" + std::to_string(ctx);
            s.context = ctx;
            s.option_given = true;
            s.optarg = v;
            const Outcome o = run(s);
            check_common(s, o);
            check(o.option && *o.option == -1, s, o, "option callback must return -1");
            check(o.post_opt == -1, s, o, "init_post_opt must refuse the launch");
            check(std::any_of(o.log.begin(), o.log.end(),
                              [](const std::string& l) { return l.rfind("error: ", 0) == 0; }),
                  s, o, "no error logged");
            check(!o.secret, s, o, "secret made for a refused step");
        }
        // In slurmstepd a bad value does not fail the callback; task_init reports it.
    }
    for (const auto& v : bad) {
        Step s = ddp_step("bad optarg '" + shorten(v, 30) + "' in slurmstepd", valid_env(1));
        s.optarg = v;
        const Outcome o = run(s);
        check_common(s, o);
        check(o.option && *o.option == 0, s, o, "remote option callback must return 0");
        check(o.task_init == -1, s, o, "task_init must fail");
        check(o.env == s.env, s, o, "environment changed:" + env_diff(s.env, o.env));
        check(o.task_stderr.find("slurm-ddp: error:") != std::string::npos, s, o,
              "no error on the task's stderr");
    }
    for (const std::optional<std::string>& v :
         {std::optional<std::string>{}, std::optional<std::string>{"port=29500"},
          std::optional<std::string>{"gpu-bind=none,verbose,timeout=30"},
          std::optional<std::string>{"on"}}) {
        Step s;
        s.name = "good optarg '" + v.value_or("<none>") + "' in srun";
        s.context = S_CTX_LOCAL;
        s.option_given = true;
        s.optarg = v;
        const Outcome o = run(s);
        check_common(s, o);
        check(o.option && *o.option == 0 && o.post_opt == 0, s, o, "must be accepted");
        check(o.secret && o.secret->size() == 64 &&
                  o.secret->find_first_not_of("0123456789abcdef") == std::string::npos,
              s, o, "SLURM_DDP_SECRET is not 64 hex digits");
        expect_plugin_time(s, o, "srun", {"init", "option", "init_post_opt"}, "");
        s.name = "good optarg '" + v.value_or("<none>") + "' in sbatch";
        s.context = S_CTX_ALLOCATOR;
        const Outcome a = run(s);
        check_common(s, a);
        check(a.post_opt == 0 && plugin_time_lines(a).empty(), s, a,
              "sbatch must accept and not log a plugin time");
    }
    {  // broken plugin arguments fail only steps that ask for --ddp, in srun, before launch
        Step s;
        s.name = "--ddp with broken plugin arguments in srun";
        s.context = S_CTX_LOCAL;
        s.option_given = true;
        s.plugin_args = {"port=99999"};
        const Outcome o = run(s);
        check_common(s, o);
        check(o.post_opt == -1 && logged_error_naming(o, "port"), s, o,
              "must refuse, naming the argument");
        Step r = ddp_step("--ddp with broken plugin arguments in slurmstepd", valid_env(1));
        r.plugin_args = {"port=99999"};
        expect_task_error(r, "port");
    }
}

// srun when getrandom or setenv fails: only a step that asked for --ddp may be refused.
void scenarios_srun_without_secret() {
    for (const bool random_fails : {true, false}) {
        for (const std::string asked : {"no --ddp", "site default=on", "--ddp"}) {
            Step s;
            s.context = S_CTX_LOCAL;
            s.name = std::string("srun, ") + (random_fails ? "getrandom" : "setenv") + " fails, " +
                     asked;
            if (asked == "site default=on") s.plugin_args = {"default=on"};
            s.option_given = asked == "--ddp";
            (random_fails ? g_fail_getrandom : g_fail_setenv) = true;
            const Outcome o = run(s);
            g_fail_getrandom = g_fail_setenv = false;
            check_common(s, o);
            check(!o.secret, s, o, "a secret although making it failed");
            const bool errors = std::any_of(o.log.begin(), o.log.end(), [](const std::string& l) {
                return l.rfind("error: ", 0) == 0;
            });
            if (s.option_given) {
                check(o.post_opt == -1, s, o, "a --ddp step launched without its secret");
                check(logged_error_naming(o, random_fails ? "getrandom" : "SLURM_DDP_SECRET"), s, o,
                      "the error does not say what failed");
            } else {
                check(o.post_opt == 0 && !errors, s, o,
                      "srun refused (or complained about) a step that did not ask for --ddp");
            }
        }
    }
    {  // the site default on the node then stays out of the step srun launched without a secret
        Step s;
        s.name = "site default=on, task without a secret";
        s.plugin_args = {"default=on"};
        s.env = valid_env(1);
        const Outcome o = run(s);
        check_common(s, o);
        check(o.task_init == 0 && o.env == s.env && o.task_stderr.empty(), s, o,
              "a site-default task without a secret was touched:" + env_diff(s.env, o.env));
    }
}

// The site default (default=on) may add variables to a step that never asked, or stay out where
// it cannot; it never fails it. The same steps with --ddp fail loudly.
void scenarios_site_default_never_fails() {
    struct Case {
        std::string name;
        Env env;
        std::string needle;  // what the --ddp error names
    };
    std::vector<Case> cases;
    {  // srun -n2 --gres=gpu:1 true: two tasks, one GPU on the node
        Env e = valid_env(1);
        e["SLURM_STEP_NUM_TASKS"] = e["SLURM_NTASKS"] = "2";
        e["SLURM_STEP_NUM_NODES"] = e["SLURM_NNODES"] = "1";
        e["SLURM_STEP_NODELIST"] = e["SLURM_NODELIST"] = e["SLURM_JOB_NODELIST"] = "n1";
        e["SLURM_STEP_TASKS_PER_NODE"] = e["SLURM_TASKS_PER_NODE"] = "2";
        e["SLURM_NODEID"] = "0";
        e["SLURMD_NODENAME"] = "n1";
        e["CUDA_VISIBLE_DEVICES"] = e["SLURM_STEP_GPUS"] = e["SLURM_JOB_GPUS"] = "0";
        cases.push_back({"more tasks than GPUs", e, "GPU"});
    }
    {  // -m arbitrary with a host file the node cannot read
        Env e = valid_env(1);
        e["SLURM_DISTRIBUTION"] = "arbitrary";
        e["SLURM_HOSTFILE"] = "/nonexistent/hostfile";
        cases.push_back({"-m arbitrary", e, "SLURM_HOSTFILE"});
    }
    for (auto& c : cases) {
        c.env["SLURM_DDP_SECRET"] = std::string(64, 'a');
        Step explicit_ddp = ddp_step(c.name + " with --ddp", c.env);
        expect_task_error(explicit_ddp, c.needle);
        Step s;
        s.name = c.name + " under site default=on";
        s.plugin_args = {"default=on"};
        s.env = c.env;
        const Outcome o = run(s);
        check_common(s, o);
        Env want = c.env;
        want.erase("SLURM_DDP_SECRET");
        check(o.task_init == 0, s, o, "the site default failed a step that did not ask");
        check(o.env == want, s, o,
              "changed more than dropping the secret:" + env_diff(want, o.env));
        check(o.task_stderr.empty(), s, o, "wrote to the task's stderr");
        check(!logged_error_naming(o, ""), s, o, "logged an error");
        check(std::any_of(o.log.begin(), o.log.end(),
                          [&](const std::string& l) {
                              return l.rfind("verbose: ", 0) == 0 &&
                                     l.find("site default") != std::string::npos &&
                                     l.find(c.needle) != std::string::npos;
                          }),
              s, o, "no verbose line saying why the step runs without DDP");
    }
    {  // the derived MASTER_PORT busy on rank 0's node
        Env e = valid_env(0);
        e["SLURM_DDP_SECRET"] = std::string(64, 'a');
        Step probe = ddp_step("busy port: the derived port", e);
        const Outcome first = expect_task_ok(probe);
        const long port = std::strtol(get(first.env, "MASTER_PORT").c_str(), nullptr, 10);
        const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in sa{};
        sa.sin_family = AF_INET;
        sa.sin_port = htons(static_cast<std::uint16_t>(port));
        sa.sin_addr.s_addr = htonl(INADDR_ANY);
        if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0 &&
            ::listen(fd, 1) == 0) {
            expect_task_error(ddp_step("busy derived port with --ddp", e), std::to_string(port));
            Step s;
            s.name = "busy derived port under site default=on";
            s.plugin_args = {"default=on"};
            s.env = e;
            const Outcome o = run(s);
            check_common(s, o);
            Env want = e;
            want.erase("SLURM_DDP_SECRET");
            check(o.task_init == 0 && o.env == want && o.task_stderr.empty(), s, o,
                  "the site default failed or half set up rank 0:" + env_diff(want, o.env));
        } else {
            std::printf("  note: cannot hold port %ld; busy-port case skipped\n", port);
        }
        if (fd >= 0) ::close(fd);
    }
}

// --ddp=debug=DIR where another user planted the step's directory as a link: refused by name,
// nothing created behind the link.
void scenario_debug_dir_shared() {
    char tmpl[] = "/tmp/sddp-host-debug.XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) return;
    const std::string root = tmpl, shared = root + "/shared", victim = root + "/victim";
    ::mkdir(shared.c_str(), 0700);
    ::chmod(shared.c_str(), 01777);
    ::mkdir(victim.c_str(), 0700);
    (void)!::symlink(victim.c_str(), (shared + "/4242.3").c_str());
    Env e = valid_env(1);
    e["SLURM_DDP_SECRET"] = std::string(64, 'a');
    Step s = ddp_step("--ddp=debug in a shared directory with a planted link", e);
    s.optarg = "debug=" + shared;
    expect_task_error(s, shared + " is writable by other users");
    Step site = s;
    site.name = "site default debug=DIR in a shared directory";
    site.option_given = false;
    site.optarg.reset();
    site.plugin_args = {"default=on", "debug=" + shared};
    const Outcome o = run(site);
    check_common(site, o);
    check(o.task_init == 0, site, o, "the site default failed a step that did not ask");
    const bool victim_empty = ::rmdir(victim.c_str()) == 0;
    check(victim_empty, s, o, "something was created behind the planted link");
    ::unlink((shared + "/4242.3").c_str());
    ::rmdir(shared.c_str());
    ::rmdir(victim.c_str());
    ::rmdir(root.c_str());
}

// Injected values: shell syntax in MASTER_ADDR, a 10 MB secret, control characters in a --ddp
// value. Each is a clear error naming it; nothing is set, nothing launched, nothing cut short.
void scenarios_injected_values() {
    for (const std::string addr :
         {"$(touch /tmp/sddp-pwned)", "n1;reboot", "`id`", "n1 n2", "n1\nMASTER_PORT=1"}) {
        Env e = valid_env(1);
        e["MASTER_ADDR"] = addr;
        expect_task_error(ddp_step("MASTER_ADDR=" + shorten(addr, 30), e), "MASTER_ADDR='");
    }
    {
        Env e = valid_env(1);
        e["SLURM_DDP_SECRET"] = std::string(10 << 20, 'a');
        expect_task_error(ddp_step("SLURM_DDP_SECRET of 10 MB", e),
                          "SLURM_DDP_SECRET is longer than 1 MiB");
        e["SLURM_DDP_SECRET"] = std::string(65, 'a');
        expect_task_error(ddp_step("SLURM_DDP_SECRET of 65 characters", e),
                          "SLURM_DDP_SECRET has 65 characters");
    }
    for (const std::string v :
         {"addr=n1\n", "debug=/tmp/a\nb", "addr-suffix=-ib\x1b[2J", "port=29500\r", "verbose\x1b",
          "gpu-bind=local\x7f", "rank-order=node\x01", "timeout=30\x0b"}) {
        Step s;
        s.name = "option with a control character: " + shorten(v, 30);
        s.context = S_CTX_LOCAL;
        s.option_given = true;
        s.optarg = v;
        const Outcome o = run(s);
        check_common(s, o);
        check(o.option && *o.option == -1 && o.post_opt == -1 && !o.secret, s, o,
              "srun must refuse the launch");
        check(logged_error_naming(o, "\\x"), s, o, "the error does not show the character");
    }
}

// (f) random inputs: no crash; without --ddp nothing changes.
void scenario_random(std::mt19937_64& rng, int iterations) {
    const std::vector<std::string> vars{"SLURM_JOB_ID",
                                        "SLURM_STEP_ID",
                                        "SLURM_STEPID",
                                        "SLURM_STEP_NUM_TASKS",
                                        "SLURM_NTASKS",
                                        "SLURM_STEP_NUM_NODES",
                                        "SLURM_NNODES",
                                        "SLURM_PROCID",
                                        "SLURM_LOCALID",
                                        "SLURM_NODEID",
                                        "SLURM_STEP_NODELIST",
                                        "SLURM_NODELIST",
                                        "SLURM_STEP_TASKS_PER_NODE",
                                        "SLURM_TASKS_PER_NODE",
                                        "SLURMD_NODENAME",
                                        "SLURM_DISTRIBUTION",
                                        "SLURM_HOSTFILE",
                                        "SLURM_STEP_RESV_PORTS",
                                        "SLURM_HET_SIZE",
                                        "SLURM_NODELIST_HET_GROUP_0",
                                        "SLURM_DIST_PLANESIZE",
                                        "SLURM_CPUS_PER_TASK",
                                        "MASTER_ADDR",
                                        "MASTER_PORT",
                                        "CUDA_VISIBLE_DEVICES",
                                        "SLURM_STEP_GPUS",
                                        "SLURM_JOB_GPUS",
                                        "SLURM_GPUS_ON_NODE",
                                        "SLURM_DDP_SECRET"};
    const std::vector<std::string> atoms{"0",           "1",
                                         "2",           "3",
                                         "4",           "-1",
                                         "abc",         "",
                                         "4294967295",  "4294967296",
                                         "n[1-2]",      "n[1-3]",
                                         "n1,n2",       "2(x2)",
                                         "1,3",         "2(x",
                                         "block",       "cyclic",
                                         "arbitrary",   "n1",
                                         "n2",          "0,1",
                                         "GPU-1234",    "/nonexistent/hostfile",
                                         "12000-12010", "a[0-999999999]",
                                         "[",           "]",
                                         ",",           "(x",
                                         "port=29500",  "off",
                                         "on",          "gpu-bind=closest",
                                         "timeout=5",   "verbose",
                                         "=",           "x=y",
                                         "default=off", "gpu-share",
                                         "nccl-hints",  "override",
                                         "addr=h",      "addr-suffix=-ib"};
    auto pick = [&](const std::vector<std::string>& v) { return v[rng() % v.size()]; };
    auto value = [&]() -> std::string {
        switch (rng() % 6) {
            case 0:
                return random_bytes(rng, rng() % 64);
            case 1:
                return pick(atoms) + pick(atoms);
            case 2:
                return std::to_string(rng() % 8);
            default:
                return pick(atoms);
        }
    };
    int ddp_ok = 0, ddp_fail = 0;
    for (int i = 0; i < iterations; ++i) {
        Step s;
        s.name = "random #" + std::to_string(i);
        const auto r = rng() % 10;
        s.context = r < 7 ? S_CTX_REMOTE : (r < 9 ? S_CTX_LOCAL : S_CTX_ALLOCATOR);
        s.env = (rng() % 4) ? valid_env(static_cast<int>(rng() % 4)) : Env{};
        const int edits = static_cast<int>(rng() % 4);
        for (int k = 0; k < edits; ++k) {
            if (rng() % 5 == 0)
                s.env.erase(pick(vars));
            else
                s.env[pick(vars)] = value();
        }
        const int nargs = (rng() % 2) ? 0 : static_cast<int>(rng() % 4);
        for (int k = 0; k < nargs; ++k) s.plugin_args.push_back(value());
        s.option_given = rng() % 2;
        if (s.option_given && rng() % 3) s.optarg = value();
        if (rng() % 8 == 0)
            s.step_id = 0xfffffff0u + static_cast<std::uint32_t>(rng() % 16);
        else
            s.step_id = static_cast<std::uint32_t>(rng() % 5);

        const Outcome o = run(s);
        check_common(s, o);
        check(o.task_init == 0 || o.task_init == -1, s, o, "task_init returned another value");
        check(o.post_opt == 0 || o.post_opt == -1, s, o, "init_post_opt returned another value");
        bool site_may_enable = false;
        for (const auto& a : s.plugin_args)
            if (a.find("default") != std::string::npos || a.find("on") != std::string::npos)
                site_may_enable = true;
        check(s.option_given || (o.post_opt == 0 && o.task_init == 0), s, o,
              "failed a step that did not ask for --ddp");
        if (!s.option_given && !site_may_enable) {
            // Only srun's secret goes (made in case the node turned --ddp on; it did not).
            Env want = s.env;
            if (s.context == S_CTX_REMOTE) want.erase("SLURM_DDP_SECRET");
            check(o.env == want, s, o,
                  "environment changed without --ddp:" + env_diff(want, o.env));
            check(o.post_opt == 0 && o.task_init == 0, s, o, "failed without --ddp");
            check(plugin_time_lines(o).empty(), s, o, "logged its time without --ddp");
            if (s.context != S_CTX_LOCAL) check(!o.secret, s, o, "secret without --ddp");
        }
        if (s.step_id && *s.step_id >= 0xfffffff0u) {
            Env want = s.env;
            if (s.context == S_CTX_REMOTE) want.erase("SLURM_DDP_SECRET");
            check(o.env == want && o.task_init == 0, s, o, "special step touched");
        }
        if (o.task_init == -1) {
            ++ddp_fail;
            check(o.env == s.env, s, o, "environment changed by a failing task_init");
            check(std::any_of(o.log.begin(), o.log.end(),
                              [](const std::string& l) { return l.rfind("error: ", 0) == 0; }),
                  s, o, "task_init failed without an error message");
        } else if (s.context == S_CTX_REMOTE && o.env != s.env) {
            ++ddp_ok;
        }
    }
    std::printf("random: %d iterations, %d --ddp tasks set up, %d refused with an error\n",
                iterations, ddp_ok, ddp_fail);
}

}  // namespace

// gres.conf Flags=amd_gpu_env / intel_gpu_env: Slurm lists the GPUs in ROCR_VISIBLE_DEVICES or
// ZE_AFFINITY_MASK and sets no CUDA_VISIBLE_DEVICES. The plugin binds through that variable with
// the same policies and never invents CUDA_VISIBLE_DEVICES.
void scenarios_gpu_kinds() {
    for (const char* var : {"ROCR_VISIBLE_DEVICES", "ZE_AFFINITY_MASK"}) {
        Env e = valid_env(1);  // local rank 1 of 2 on n1
        e[var] = "0,1";
        e["SLURM_STEP_GPUS"] = "0,1";
        e["SLURM_GPUS_ON_NODE"] = "2";
        const std::string what = std::string(var) + " from Slurm";
        auto o = expect_task_ok(ddp_step(what + ", gpu-bind=local", e));
        Step s = ddp_step(what + ", gpu-bind=local", e);
        check(get(o.env, var) == "0,1", s, o, std::string(var) + "=" + get(o.env, var));
        check(get(o.env, "SLURM_DDP_DEVICE") == "1", s, o,
              "SLURM_DDP_DEVICE=" + get(o.env, "SLURM_DDP_DEVICE"));
        check(o.env.count("CUDA_VISIBLE_DEVICES") == 0, s, o, "CUDA_VISIBLE_DEVICES invented");
        Step single = ddp_step(what + ", gpu-bind=single", e);
        single.optarg = "gpu-bind=single";
        auto os = expect_task_ok(single);
        check(get(os.env, var) == "1", single, os, std::string(var) + "=" + get(os.env, var));
        check(get(os.env, "SLURM_DDP_DEVICE") == "0", single, os,
              "SLURM_DDP_DEVICE=" + get(os.env, "SLURM_DDP_DEVICE"));
        check(os.env.count("CUDA_VISIBLE_DEVICES") == 0, single, os,
              "CUDA_VISIBLE_DEVICES invented");
    }
}

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

// SPDX-License-Identifier: Apache-2.0
// The fake Slurm: the spank_* and slurm_* functions the plugin imports, exported by the host
// (-rdynamic) over an in-memory task environment, and the libc calls the host can make fail.
#include "host.hpp"

namespace plugin_host {
Fake g;
}  // namespace plugin_host

using namespace plugin_host;

struct spank_handle {
    int magic;
};

namespace {
spank_handle g_handle{0x5ddb};

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

spank_t plugin_host::handle() {
    return &g_handle;
}

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
    if (opt->usage == nullptr || *opt->usage == '\0') {
        bad_call("option without a usage text (srun --help prints it)");
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
    } else if (item == S_TASK_ID) {
        // The task's index on its node: what slurmstepd exports to it as SLURM_LOCALID.
        auto* out = va_arg(ap, std::uint32_t*);
        const auto it = g.env.find("SLURM_LOCALID");
        if (out == nullptr) {
            bad_call("spank_get_item(S_TASK_ID, NULL)");
            rc = ESPANK_BAD_ARG;
        } else if (it == g.env.end()) {
            rc = ESPANK_NOT_AVAIL;
        } else {
            *out = static_cast<std::uint32_t>(std::stoul(it->second));
        }
    } else if (item == S_JOB_LOCAL_TASK_COUNT) {
        // Not modelled: the host runs every hook in one process and forks no tasks, so the step
        // watch (a thread, and a watcher cloned from task 0) has no place here and stays off,
        // as the plugin does wherever slurmstepd cannot say how many tasks the node runs.
        (void)va_arg(ap, std::uint32_t*);
        rc = ESPANK_NOT_AVAIL;
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

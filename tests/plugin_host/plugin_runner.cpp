// SPDX-License-Identifier: Apache-2.0
// Loading the plugin, running its hooks as Slurm does for one step, and the checks every
// scenario makes on the outcome.
#include "host.hpp"

namespace plugin_host {

const char* g_plugin_path = nullptr;
bool g_verbose = false;
char g_current[512] = "(start)";
int g_capture_fd = -1;
int g_saved_stderr = -1;
int g_checks = 0;
int g_failures = 0;

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

namespace {

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

}  // namespace

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

std::string shorten(const std::string& s, std::size_t max) {
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

Env valid_env(int rank) {
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

std::string random_bytes(std::mt19937_64& rng, std::size_t n) {
    std::string s(n, '\0');
    for (auto& c : s) c = static_cast<char>(1 + rng() % 255);
    return s;
}

// --ddp=hostfile: the file exists with the step's nodes while the task starts, and is gone after
// slurm_spank_exit; a second task of the node accepts the first one's file.

}  // namespace plugin_host

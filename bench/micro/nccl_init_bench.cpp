// SPDX-License-Identifier: Apache-2.0
// nccl_init_bench: time from process start to a ready one-rank NCCL communicator, through the
// library (sddp_init) versus calling CUDA and NCCL directly: the library's overhead.
//
// Method: every repetition is a FRESH process, so that loading libcudart/libnccl, creating the
// CUDA context and initialising NCCL are counted each time, as a trainer pays them once per
// start. The parent never touches CUDA itself (a probe child checks for a device). It forks,
// and the child reads CLOCK_MONOTONIC just before execve()ing this program again with a mode
// argument and that time; the new process reports, through a pipe, CLOCK_MONOTONIC - t0 at
// main(), after each phase and once the communicator is destroyed, then exits. Modes alternate
// (the order rotates every repetition) so that drift in the machine's state hits all of them.
//
// Modes:
//   library          sddp_init with the defaults, world size 1 (RANK=0 WORLD_SIZE=1
//                    LOCAL_RANK=0 LOCAL_WORLD_SIZE=1; SLURM_*, OMPI_*, PMI* and the other DDP
//                    variables removed): identity, GPU choice, self transport, preflight,
//                    ncclCommInitRankConfig (non-blocking, polled), the blocking world
//                    ncclCommSplit and the node-local one. Ready = sddp_init returned.
//   library-nolocal  the same with no_local_comm = 1 (no node-local split): the work of `direct`
//                    plus the one split that makes the handed-out communicator blocking.
//   direct           cudaSetDevice(0); cudaFree(0) (context: the "CUDA" phase);
//                    ncclGetUniqueId; ncclCommInitRank(&comm, 1, id, 0). Ready = it returned.
// Teardown (sddp_finalize / ncclCommDestroy) is timed too but not part of "ready".
//
// Output: one table (median and p10-p90 of exec -> ready, medians of the phases) and, for each
// library mode, its ratio to `direct` and the difference of the medians. Without a usable GPU
// (cudaGetDeviceCount fails or finds none, or the library has no NCCL layer) it prints one line
// "SKIP: no CUDA device (...)" and exits 0, unless nvidia-smi -L lists a GPU: then that is a
// failure ("FAIL: ...", exit 1), so a broken driver or library never reads as "no GPU here".
//
//   nccl_init_bench [--reps 10] [--warmup 1] [--modes library,library-nolocal,direct]
//                   [--timeout-s 120]
//   (internal: nccl_init_bench --child MODE T0_NS FD)
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <nccl.h>
#include <poll.h>
#include <signal.h>
#include <slurm_ddp/bootstrap.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

extern char** environ;

namespace {

constexpr int kChildFd = 3;  // the report pipe's write end in the child

std::int64_t now_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// ---- child side ---------------------------------------------------------------------------

struct Report {
    std::int64_t t0;
    std::string fields;  // " key=nanoseconds since t0 ..." (and key=word)

    void mark(const char* key) { mark_at(key, now_ns()); }
    void mark_at(const char* key, std::int64_t t) {
        fields += " " + std::string(key) + "=" + std::to_string(t - t0);
    }
    void word(const char* key, const std::string& value) {
        std::string v = value;
        std::replace(v.begin(), v.end(), ' ', '_');
        fields += " " + std::string(key) + "=" + v;
    }
};

int send(int fd, const std::string& line) {
    const std::string s = line + "\n";
    std::size_t off = 0;
    while (off < s.size()) {
        const ssize_t w = ::write(fd, s.data() + off, s.size() - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return 1;
        off += static_cast<std::size_t>(w);
    }
    return 0;
}

int fail(int fd, const std::string& why) {
    send(fd, "ERR " + why);
    return 1;
}

std::string cuda_text(const char* call, cudaError_t e) {
    return std::string(call) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

std::string nccl_text(const char* call, ncclResult_t r) {
    return std::string(call) + ": " + ncclGetErrorString(r);
}

// The first GPU nvidia-smi -L lists ("" when it is absent, fails or lists none).
std::string nvidia_smi_gpus() {
    FILE* p = ::popen("nvidia-smi -L 2>/dev/null", "r");
    if (!p) return "";
    char line[512] = {0};
    const bool got = std::fgets(line, sizeof line, p) != nullptr;
    const int rc = ::pclose(p);
    if (!got || rc != 0 || std::strncmp(line, "GPU ", 4) != 0) return "";
    std::string s(line);
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    return s;
}

// Probe: is there a device? Runs in a child so that the parent never initialises CUDA.
int child_probe(int fd) {
    if (!sddp_have_nccl()) {
        return send(fd, "NODEV libslurm_ddp has no NCCL layer or cannot load NCCL/libcudart");
    }
    int count = 0;
    if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) {
        return send(fd, "NODEV " + cuda_text("cudaGetDeviceCount", e));
    }
    if (count == 0) return send(fd, "NODEV cudaGetDeviceCount found 0 devices");
    cudaDeviceProp prop{};
    std::string name = "?";
    if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) name = prop.name;
    std::replace(name.begin(), name.end(), ' ', '_');  // the report is space-separated
    int nccl_version = 0;
    ncclGetVersion(&nccl_version);
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    return send(fd, "OK count=" + std::to_string(count) + " nccl=" + std::to_string(nccl_version) +
                        " driver=" + std::to_string(driver) +
                        " runtime=" + std::to_string(runtime) + " name=" + name);
}

int child_direct(int fd, Report& r) {
    if (const cudaError_t e = cudaSetDevice(0); e != cudaSuccess) {
        return fail(fd, cuda_text("cudaSetDevice(0)", e));
    }
    if (const cudaError_t e = cudaFree(nullptr); e != cudaSuccess) {
        return fail(fd, cuda_text("cudaFree(0)", e));
    }
    r.mark("cuda");
    ncclUniqueId id;
    if (const ncclResult_t e = ncclGetUniqueId(&id); e != ncclSuccess) {
        return fail(fd, nccl_text("ncclGetUniqueId", e));
    }
    r.mark("uid");
    ncclComm_t comm = nullptr;
    if (const ncclResult_t e = ncclCommInitRank(&comm, 1, id, 0); e != ncclSuccess) {
        return fail(fd, nccl_text("ncclCommInitRank", e));
    }
    r.mark("ready");
    if (const ncclResult_t e = ncclCommDestroy(comm); e != ncclSuccess) {
        return fail(fd, nccl_text("ncclCommDestroy", e));
    }
    r.mark("done");
    return send(fd, "OK" + r.fields);
}

int child_library(int fd, Report& r, bool local_comm) {
    sddp_options o;
    sddp_options_init(&o);
    o.timeout_ms = 60000;
    o.no_local_comm = local_comm ? 0 : 1;
    sddp_handle* h = nullptr;
    if (const int rc = sddp_init(&o, &h); rc != SDDP_OK) {
        return fail(fd,
                    std::string("sddp_init: ") + sddp_status_name(rc) + ": " + sddp_last_error());
    }
    r.mark("ready");
    if (!sddp_nccl_comm(h) || sddp_world_size(h) != 1 || (local_comm && !sddp_nccl_local_comm(h))) {
        sddp_abort(h, "nccl_init_bench: unexpected handle");
        return fail(fd, "sddp_init returned without the expected communicator(s) or world size 1");
    }
    const std::string transport = sddp_transport_name(h);
    const std::string source = sddp_identity_source(h);
    if (const int rc = sddp_finalize(h); rc != SDDP_OK) {
        return fail(fd, std::string("sddp_finalize: ") + sddp_last_error());
    }
    r.mark("done");
    r.word("transport", transport);
    r.word("identity", source);
    return send(fd, "OK" + r.fields);
}

int child_main(const std::string& mode, const char* t0_text, const char* fd_text) {
    const std::int64_t t_main = now_ns();
    const int fd = std::atoi(fd_text);
    Report r{std::strtoll(t0_text, nullptr, 10), ""};
    r.mark_at("main", t_main);
    if (mode == "probe") return child_probe(fd);
    if (mode == "direct") return child_direct(fd, r);
    if (mode == "library") return child_library(fd, r, true);
    if (mode == "library-nolocal") return child_library(fd, r, false);
    return fail(fd, "unknown mode " + mode);
}

// ---- parent side --------------------------------------------------------------------------

bool strip_from_child_env(const std::string& entry) {
    const std::string name = entry.substr(0, entry.find('='));
    static const char* const exact[] = {
        "RANK",       "WORLD_SIZE",       "LOCAL_RANK",  "LOCAL_WORLD_SIZE",    "NODE_RANK",
        "GROUP_RANK", "GROUP_WORLD_SIZE", "NNODES",      "ROLE_RANK",           "ROLE_WORLD_SIZE",
        "ROLE_NAME",  "MASTER_ADDR",      "MASTER_PORT", "CUDA_LAUNCH_BLOCKING"};
    for (const char* e : exact) {
        if (name == e) return true;
    }
    for (const char* p : {"SLURM_", "OMPI_", "PMI_", "PMIX_"}) {
        if (name.rfind(p, 0) == 0) return true;
    }
    return false;
}

// One rank of one, whatever launched the benchmark (srun, mpirun, torchrun).
std::vector<std::string> child_env() {
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) {
        if (!strip_from_child_env(*e)) env.emplace_back(*e);
    }
    for (const char* kv : {"RANK=0", "WORLD_SIZE=1", "LOCAL_RANK=0", "LOCAL_WORLD_SIZE=1"}) {
        env.emplace_back(kv);
    }
    return env;
}

struct Run {
    bool ok = false;
    std::string line;  // the child's report ("OK ...", "ERR ...") or what went wrong
    std::map<std::string, std::string> kv;
};

std::string self_exe() {
    char buf[4096];
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return {};
    return std::string(buf, static_cast<std::size_t>(n));
}

// Fork; the child takes t0 just before execve(self, --child MODE t0 3).
Run spawn(const std::string& exe, const std::string& mode, const std::vector<std::string>& env,
          int timeout_s) {
    Run run;
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) {
        run.line = std::string("pipe2: ") + std::strerror(errno);
        return run;
    }
    std::vector<char*> envp;
    envp.reserve(env.size() + 1);
    for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    char t0_buf[32] = {};
    char fd_buf[] = "3";
    std::string child_flag = "--child";
    std::vector<char*> argv = {const_cast<char*>(exe.c_str()),
                               child_flag.data(),
                               const_cast<char*>(mode.c_str()),
                               t0_buf,
                               fd_buf,
                               nullptr};
    (void)std::fflush(stdout);
    (void)std::fflush(stderr);
    const pid_t pid = ::fork();
    if (pid < 0) {
        run.line = std::string("fork: ") + std::strerror(errno);
        ::close(p[0]);
        ::close(p[1]);
        return run;
    }
    if (pid == 0) {
        // dup2 clears FD_CLOEXEC on the copy; stdout goes to stderr so the table stays clean.
        if (::dup2(p[1], kChildFd) < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) _exit(126);
        (void)std::snprintf(t0_buf, sizeof t0_buf, "%lld", static_cast<long long>(now_ns()));
        ::execve(exe.c_str(), argv.data(), envp.data());
        _exit(127);
    }
    ::close(p[1]);
    std::string out;
    const std::int64_t deadline = now_ns() + static_cast<std::int64_t>(timeout_s) * 1000000000;
    bool timed_out = false;
    for (;;) {
        const std::int64_t left_ms = (deadline - now_ns()) / 1000000;
        if (left_ms <= 0) {
            timed_out = true;
            break;
        }
        pollfd pfd{p[0], POLLIN, 0};
        const int pr = ::poll(&pfd, 1, static_cast<int>(std::min<std::int64_t>(left_ms, 1000)));
        if (pr < 0 && errno == EINTR) continue;
        if (pr <= 0) continue;
        char buf[4096];
        const ssize_t n = ::read(p[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;  // EOF: the child exited (or closed the pipe)
        out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(p[0]);
    if (timed_out) ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (auto nl = out.find('\n'); nl != std::string::npos) out.resize(nl);
    run.line = out;
    if (timed_out) {
        run.line = "no report within " + std::to_string(timeout_s) + " s (killed)" +
                   (out.empty() ? "" : "; partial: " + out);
        return run;
    }
    const bool exited_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (out.empty()) {
        run.line = WIFSIGNALED(status)
                       ? "child killed by signal " + std::to_string(WTERMSIG(status))
                       : "child exited with status " + std::to_string(WEXITSTATUS(status)) +
                             " without a report" +
                             (WEXITSTATUS(status) == 127 ? " (execve failed)" : "");
        return run;
    }
    // "OK k=v k=v ..." (probe: "OK ..." or "NODEV why"; failures: "ERR why").
    std::size_t pos = out.find(' ');
    const std::string head = out.substr(0, pos);
    while (pos != std::string::npos) {
        const std::size_t next = out.find(' ', pos + 1);
        const std::string tok =
            out.substr(pos + 1, next == std::string::npos ? next : next - pos - 1);
        if (auto eq = tok.find('='); eq != std::string::npos) {
            run.kv[tok.substr(0, eq)] = tok.substr(eq + 1);
        }
        pos = next;
    }
    run.ok = head == "OK" && exited_ok;
    if (head == "OK" && !exited_ok) run.line += " (but the child's exit status was not 0)";
    return run;
}

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const double pos = p * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<std::size_t>(pos);
    const std::size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

std::optional<double> ms(const Run& r, const char* key) {
    auto it = r.kv.find(key);
    if (it == r.kv.end()) return std::nullopt;
    return static_cast<double>(std::strtoll(it->second.c_str(), nullptr, 10)) / 1e6;
}

std::string fmt(double x) {
    char b[32];
    (void)std::snprintf(b, sizeof b, x < 10 ? "%.2f" : "%.1f", x);
    return b;
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= s.size()) {
        const std::size_t end = s.find(sep, start);
        const std::string part = s.substr(start, end == std::string::npos ? end : end - start);
        if (!part.empty()) out.push_back(part);
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return out;
}

int usage(const char* argv0) {
    (void)std::fprintf(stderr,
                       "usage: %s [--reps N] [--warmup N] [--modes library,library-nolocal,direct] "
                       "[--timeout-s S]\n",
                       argv0);
    return 2;
}

int parent_main(int argc, char** argv) {
    int reps = 10, warmup = 1, timeout_s = 120;
    std::vector<std::string> modes = {"library", "library-nolocal", "direct"};
    if (const char* r = std::getenv("REPS"); r && *r) reps = std::atoi(r);
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (i + 1 >= argc) return usage(argv[0]);
        if (a == "--reps") {
            reps = std::atoi(argv[++i]);
        } else if (a == "--warmup") {
            warmup = std::atoi(argv[++i]);
        } else if (a == "--timeout-s") {
            timeout_s = std::atoi(argv[++i]);
        } else if (a == "--modes") {
            modes = split(argv[++i], ',');
        } else {
            return usage(argv[0]);
        }
    }
    if (reps < 1 || warmup < 0 || timeout_s < 1 || modes.empty()) return usage(argv[0]);
    for (const auto& m : modes) {
        if (m != "library" && m != "library-nolocal" && m != "direct") {
            (void)std::fprintf(stderr, "nccl_init_bench: unknown mode '%s'\n", m.c_str());
            return usage(argv[0]);
        }
    }
    const std::string exe = self_exe();
    if (exe.empty()) {
        (void)std::fprintf(stderr, "nccl_init_bench: cannot read /proc/self/exe\n");
        return 1;
    }
    const std::vector<std::string> env = child_env();

    const Run probe = spawn(exe, "probe", env, timeout_s);
    if (probe.line.rfind("NODEV ", 0) == 0) {
        // Where the driver lists a GPU, "no device" is a fault to report, not a reason to skip.
        if (const std::string gpus = nvidia_smi_gpus(); !gpus.empty()) {
            std::printf("FAIL: nvidia-smi -L lists %s but the probe found no usable device (%s)\n",
                        gpus.c_str(), probe.line.substr(6).c_str());
            return 1;
        }
        std::printf("SKIP: no CUDA device (%s)\n", probe.line.substr(6).c_str());
        return 0;
    }
    if (!probe.ok) {
        (void)std::fprintf(stderr, "nccl_init_bench: the device probe failed: %s\n",
                           probe.line.c_str());
        return 1;
    }
    auto word = [&](const char* key) {
        std::string v = probe.kv.count(key) ? probe.kv.at(key) : "?";
        std::replace(v.begin(), v.end(), '_', ' ');
        return v;
    };
    const auto nccl_v = std::atoi(probe.kv.count("nccl") ? probe.kv.at("nccl").c_str() : "0");
    std::printf(
        "nccl_init_bench: exec -> ready one-rank NCCL communicator, a fresh process per "
        "run; %d repetition(s) (+%d warm-up) per mode, interleaved\n",
        reps, warmup);
    std::printf("device 0 of %s: %s; NCCL %d.%d.%d, CUDA driver %s runtime %s; libslurm_ddp %s\n\n",
                word("count").c_str(), word("name").c_str(), nccl_v / 10000, nccl_v / 100 % 100,
                nccl_v % 100, word("driver").c_str(), word("runtime").c_str(), sddp_version());

    std::map<std::string, std::vector<Run>> runs;
    for (int rep = 0; rep < warmup + reps; ++rep) {
        for (std::size_t k = 0; k < modes.size(); ++k) {
            const std::string& mode = modes[(k + static_cast<std::size_t>(rep)) % modes.size()];
            Run r = spawn(exe, mode, env, timeout_s);
            if (!r.ok) {
                (void)std::fprintf(stderr, "nccl_init_bench: %s, repetition %d: %s\n", mode.c_str(),
                                   rep + 1, r.line.c_str());
                return 1;
            }
            if (rep >= warmup) runs[mode].push_back(std::move(r));
        }
    }

    auto median_of = [&](const std::string& mode, const char* key) -> std::optional<double> {
        std::vector<double> v;
        for (const auto& r : runs[mode]) {
            if (auto x = ms(r, key)) v.push_back(*x);
        }
        if (v.empty()) return std::nullopt;
        return percentile(v, 0.5);
    };
    auto cell = [](std::optional<double> x) { return x ? fmt(*x) : std::string("-"); };

    std::printf("Times in ms since execve (median; p10-p90 over the repetitions):\n\n");
    std::printf(
        "| mode | reps | exec -> ready | p10-p90 | exec -> main | CUDA context | "
        "unique id | teardown |\n");
    std::printf("|---|---|---|---|---|---|---|---|\n");
    std::map<std::string, double> ready_med;
    for (const auto& mode : modes) {
        std::vector<double> ready, teardown;
        for (const auto& r : runs[mode]) {
            ready.push_back(*ms(r, "ready"));
            teardown.push_back(*ms(r, "done") - *ms(r, "ready"));
        }
        ready_med[mode] = percentile(ready, 0.5);
        auto phase = [&](const char* a, const char* b) -> std::optional<double> {
            // median of (b - a), for the direct mode's phases
            std::vector<double> v;
            for (const auto& r : runs[mode]) {
                auto x = ms(r, a), y = ms(r, b);
                if (x && y) v.push_back(*y - *x);
            }
            if (v.empty()) return std::nullopt;
            return percentile(v, 0.5);
        };
        std::printf("| %s | %zu | %s | %s-%s | %s | %s | %s | %s |\n", mode.c_str(), ready.size(),
                    fmt(ready_med[mode]).c_str(), fmt(percentile(ready, 0.1)).c_str(),
                    fmt(percentile(ready, 0.9)).c_str(), cell(median_of(mode, "main")).c_str(),
                    cell(phase("main", "cuda")).c_str(), cell(phase("cuda", "uid")).c_str(),
                    fmt(percentile(teardown, 0.5)).c_str());
    }
    std::printf("\n");
    for (const auto& mode : modes) {
        const auto& r0 = runs[mode].front();
        if (mode.rfind("library", 0) == 0) {
            std::printf("- `%s`: transport %s, identity %s%s\n", mode.c_str(),
                        r0.kv.count("transport") ? r0.kv.at("transport").c_str() : "?",
                        r0.kv.count("identity") ? r0.kv.at("identity").c_str() : "?",
                        mode == "library" ? "; includes the node-local ncclCommSplit" : "");
        }
    }
    if (ready_med.count("direct")) {
        const double d = ready_med["direct"];
        for (const auto& mode : modes) {
            if (mode == "direct") continue;
            std::printf("- %s / direct: %.3fx, %+.1f ms (medians of exec -> ready)\n", mode.c_str(),
                        d > 0 ? ready_med[mode] / d : 0.0, ready_med[mode] - d);
        }
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 5 && std::strcmp(argv[1], "--child") == 0) {
        return child_main(argv[2], argv[3], argv[4]);
    }
    return parent_main(argc, argv);
}

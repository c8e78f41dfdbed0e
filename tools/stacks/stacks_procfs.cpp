// SPDX-License-Identifier: Apache-2.0
#include "stacks/stacks_procfs.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>

#include "core/base/numbers.hpp"
#include "stacks/stacks_proc.hpp"

namespace sddp::stacks {
namespace {

std::string first_line(std::optional<std::string> text) {
    if (!text) return "";
    text->erase(std::min(text->find('\n'), text->size()));
    return *text;
}

// The thread in D to show for `pid`, the main thread first; nullopt when none is.
std::optional<BlockedThread> blocked_thread(int pid) {
    const std::string dir = "/proc/" + std::to_string(pid) + "/task";
    DIR* d = ::opendir(dir.c_str());
    if (!d) return std::nullopt;
    std::vector<int> in_d;
    while (const dirent* e = ::readdir(d)) {
        const auto tid = parse_decimal(e->d_name, 1u << 30);
        if (!tid) continue;
        const auto stat = read_small_file(dir + "/" + e->d_name + "/stat", 4096);
        const auto f = stat ? parse_proc_stat(*stat) : std::nullopt;
        if (f && f->state == 'D') in_d.push_back(static_cast<int>(*tid));
    }
    ::closedir(d);
    if (in_d.empty()) return std::nullopt;
    const int tid = std::find(in_d.begin(), in_d.end(), pid) != in_d.end() ? pid : in_d.front();
    const std::string t = dir + "/" + std::to_string(tid);
    BlockedThread b;
    b.tid = tid;
    b.wchan = first_line(read_small_file(t + "/wchan", 256));
    if (b.wchan == "0") b.wchan.clear();
    b.kernel_stack = read_small_file(t + "/stack", 64u << 10).value_or("");
    return b;
}

// What needs the process's memory map: environ, cmdline, maps (and exe, cheap, beside them).
void read_memory_backed(ProcessFacts& p, const std::vector<std::string>& wanted) {
    const std::string dir = "/proc/" + std::to_string(p.pid);
    if (const auto environ_text = read_small_file(dir + "/environ")) {
        std::size_t start = 0;
        while (start < environ_text->size()) {
            auto end = environ_text->find('\0', start);
            if (end == std::string::npos) end = environ_text->size();
            const std::string_view entry(environ_text->data() + start, end - start);
            const auto eq = entry.find('=');
            if (eq != std::string_view::npos) {
                const std::string name(entry.substr(0, eq));
                if (std::find(wanted.begin(), wanted.end(), name) != wanted.end()) {
                    p.env[name] = std::string(entry.substr(eq + 1));
                }
            }
            start = end + 1;
        }
    }
    if (const auto cmdline = read_small_file(dir + "/cmdline", 1u << 16)) {
        p.argv0 = cmdline->substr(0, cmdline->find('\0'));
    }
    char exe[4096] = {};
    const ssize_t n = ::readlink((dir + "/exe").c_str(), exe, sizeof exe - 1);
    p.exe = n > 0 ? std::string(exe, static_cast<std::size_t>(n)) : "";
    const std::string exe_base = p.exe.substr(p.exe.rfind('/') + 1);
    if (const auto maps = read_small_file(dir + "/maps", 16u << 20)) {
        if (const auto at = maps->find("/libpython"); at != std::string::npos) {
            const auto line_start = maps->rfind('\n', at) + 1;  // npos + 1 == 0
            const auto path_start = maps->find('/', line_start);
            const auto line_end = std::min(maps->find('\n', at), maps->size());
            p.libpython = maps->substr(path_start, line_end - path_start);
            if (const auto del = p.libpython.find(" (deleted)"); del != std::string::npos) {
                p.libpython.erase(del);
            }
        }
    }
    p.python =
        exe_base.rfind("python", 0) == 0 || p.comm.rfind("python", 0) == 0 || !p.libpython.empty();
    struct stat its_root {};
    struct stat our_root {};
    p.host_root = ::stat((dir + "/root/").c_str(), &its_root) == 0 && ::stat("/", &our_root) == 0 &&
                  its_root.st_dev == our_root.st_dev && its_root.st_ino == our_root.st_ino;
    p.env_known = true;
}

// Owned jointly by the caller and the readers, so that a reader the caller stopped waiting for
// writes into memory that is still there.
struct Readers {
    std::mutex m;
    std::condition_variable cv;
    std::vector<ProcessFacts> facts;
    std::vector<bool> done;
    std::size_t left = 0;
};

}  // namespace

std::optional<std::string> read_small_file(const std::string& path, std::size_t cap) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::string text;
    char buf[8192];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
        text.append(buf, static_cast<std::size_t>(in.gcount()));
        if (text.size() > cap) break;
    }
    return text;
}

std::vector<ProcessFacts> read_step_processes(const std::vector<ListedPid>& listed,
                                              std::chrono::steady_clock::time_point deadline) {
    const int self = static_cast<int>(::getpid());
    auto readers = std::make_shared<Readers>();
    std::vector<std::size_t> to_read;
    for (const auto& l : listed) {
        // The --ddp=debug dump runs inside the step it reads: it and its scontrol are no rank.
        if (l.pid == self) continue;
        const auto stat = read_small_file("/proc/" + std::to_string(l.pid) + "/stat", 4096);
        const auto f = stat ? parse_proc_stat(*stat) : std::nullopt;
        if (!f || f->state == 'Z' || f->state == 'X' || f->ppid == self) continue;
        ProcessFacts p;
        p.pid = l.pid;
        p.ppid = f->ppid;
        p.comm = f->comm;
        p.state = f->state;
        p.task_rank = l.global_id;
        p.blocked = blocked_thread(l.pid);
        readers->facts.push_back(std::move(p));
    }
    // A page fault or a disk read also shows as D, for milliseconds: only a thread still in D a
    // moment later keeps its process from being read.
    const bool any_blocked = std::any_of(readers->facts.begin(), readers->facts.end(),
                                         [](const ProcessFacts& p) { return p.blocked; });
    if (any_blocked) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    for (std::size_t i = 0; i < readers->facts.size(); ++i) {
        auto& p = readers->facts[i];
        if (p.blocked) p.blocked = blocked_thread(p.pid);
        if (!p.blocked) to_read.push_back(i);
    }
    readers->done.assign(readers->facts.size(), false);
    readers->left = to_read.size();
    for (const std::size_t i : to_read) {
        ProcessFacts copy = readers->facts[i];
        // A copy of the names too: a reader given up on may outlive everything of ours.
        std::thread([readers, i, copy, wanted = wanted_environment()]() mutable {
            read_memory_backed(copy, wanted);
            const std::lock_guard<std::mutex> lock(readers->m);
            readers->facts[i] = std::move(copy);
            readers->done[i] = true;
            --readers->left;
            readers->cv.notify_all();
        }).detach();
    }
    std::unique_lock<std::mutex> lock(readers->m);
    readers->cv.wait_until(lock, deadline, [&] { return readers->left == 0; });
    std::vector<ProcessFacts> out = readers->facts;
    for (const std::size_t i : to_read) {
        if (readers->done[i]) continue;
        out[i].read_error = "reading /proc/" + std::to_string(out[i].pid) +
                            "/{environ,cmdline,maps} did not return in time: the process is "
                            "held in the kernel (its memory map is locked); no tool was run on it";
    }
    return out;
}

}  // namespace sddp::stacks

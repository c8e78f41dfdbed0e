// SPDX-License-Identifier: Apache-2.0
#include "check/check_gpu.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "core/gpu/device_choice.hpp"
#include "nccl/nccl_layer.hpp"

namespace sddp::check {
namespace {

std::string join_ints(const std::vector<int>& v) {
    std::string s;
    for (int i : v) s += (s.empty() ? "" : ",") + std::to_string(i);
    return s;
}

std::string clean(std::string s) {  // one line per field
    std::replace(s.begin(), s.end(), '\n', ' ');
    return s;
}

}  // namespace

std::vector<std::uint8_t> encode_gpu_facts(const GpuFacts& f) {
    std::string blocked;
    for (const auto& b : f.blocked) blocked += (blocked.empty() ? "" : ";") + clean(b);
    std::string text = "gpu=" + std::string(f.uses_gpu ? "1" : "0") +
                       "\nopen=" + join_ints(f.opened) + "\nblocked=" + blocked +
                       "\nnccl=" + clean(f.nccl) + "\ndetail=" + clean(f.nccl_detail) + "\n";
    text.resize(kGpuFactsBytes - 1);  // cut to fit, as CheckRecord's long fields are
    std::vector<std::uint8_t> out(text.begin(), text.end());
    out.push_back(0);
    return out;
}

GpuFacts decode_gpu_facts(std::span<const std::uint8_t> bytes) {
    GpuFacts f;
    std::string text(bytes.begin(), bytes.end());
    text.resize(std::strlen(text.c_str()));
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        const auto eq = line.find('=');
        if (eq == std::string::npos) continue;
        const std::string k = line.substr(0, eq), v = line.substr(eq + 1);
        if (k == "gpu") {
            f.uses_gpu = v == "1";
        } else if (k == "open") {
            std::istringstream items(v);
            std::string n;
            while (std::getline(items, n, ','))
                if (!n.empty()) f.opened.push_back(std::atoi(n.c_str()));
        } else if (k == "blocked") {
            std::istringstream items(v);
            std::string b;
            while (std::getline(items, b, ';'))
                if (!b.empty()) f.blocked.push_back(b);
        } else if (k == "nccl") {
            f.nccl = v;
        } else if (k == "detail") {
            f.nccl_detail = v;
        }
    }
    return f;
}

void probe_device_files(const std::string& dir, GpuFacts& f) {
    struct CloseDir {
        void operator()(DIR* d) const { ::closedir(d); }
    };
    std::unique_ptr<DIR, CloseDir> d(::opendir(dir.c_str()));
    if (!d) return;
    std::vector<int> minors;
    while (const dirent* e = ::readdir(d.get())) {
        const std::string n = e->d_name;
        if (n.size() > 6 && n.rfind("nvidia", 0) == 0 &&
            n.find_first_not_of("0123456789", 6) == std::string::npos) {
            minors.push_back(std::atoi(n.c_str() + 6));
        }
    }
    std::sort(minors.begin(), minors.end());
    for (int m : minors) {
        const std::string path = dir + "/nvidia" + std::to_string(m);
        const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
        if (fd >= 0) {
            ::close(fd);
            f.opened.push_back(m);
        } else if (errno != ENOENT) {
            f.blocked.push_back(path + ": " + std::strerror(errno));
        }
    }
}

Result<int> check_device(const Identity& id, const EnvLookup& env) {
    DeviceChoiceInput in =
        device_choice_input(id.device, static_cast<int>(id.local_rank),
                            static_cast<int>(id.local_world_size), id.locality_known, env);
    const auto& visible = in.slurm.task_visible;
    in.device_count = 0;
    if (visible && !visible->empty() && *visible != "NoDevFiles")
        in.device_count = static_cast<int>(std::count(visible->begin(), visible->end(), ',') + 1);
    return choose_device(in);
}

void add_bus_id(int device, CheckRecord& r, std::chrono::milliseconds budget) {
    if (r.gpu == "none" || r.gpu == "?" || !r.gpu_error.empty() || device < 0) return;
    struct Shared {
        std::mutex mu;
        std::condition_variable cv;
        bool done = false;
        std::string bus;
    };
    auto sh = std::make_shared<Shared>();
    // CUDA's first call starts its runtime, which waits on the driver: bounded like the resolver.
    std::thread([sh, device] {
        auto b = nccl::pci_bus_id(device);
        std::lock_guard<std::mutex> lock(sh->mu);
        if (b) sh->bus = *b;
        sh->done = true;
        sh->cv.notify_all();
    }).detach();
    std::unique_lock<std::mutex> lock(sh->mu);
    if (!sh->cv.wait_for(lock, budget, [&] { return sh->done; }) || sh->bus.empty()) return;
    // Without a usable CUDA runtime the CUDA_VISIBLE_DEVICES entry stays the key.
    r.gpu += " " + sh->bus;
    r.gpu_key = "pci:" + sh->bus;
}

std::vector<std::string> isolation_warnings(const std::vector<CheckRecord>& records,
                                            const std::vector<GpuFacts>& facts) {
    std::map<std::string, std::vector<std::size_t>> by_host;  // GPU ranks per host, in order
    std::vector<std::string> host_order;
    for (std::size_t i = 0; i < records.size() && i < facts.size(); ++i) {
        if (!facts[i].uses_gpu) continue;
        auto& v = by_host[records[i].host];
        if (v.empty()) host_order.push_back(records[i].host);
        v.push_back(i);
    }
    std::vector<std::string> out;
    for (const auto& host : host_order) {
        const auto& ranks = by_host[host];
        if (ranks.size() < 2) continue;
        std::string seen;
        for (std::size_t i : ranks) {
            if (facts[i].blocked.empty()) continue;
            if (!seen.empty()) seen += "; ";
            seen += "rank " + std::to_string(records[i].rank) + " cannot open " +
                    facts[i].blocked.front();
            if (facts[i].blocked.size() > 1)
                seen += " (and " + std::to_string(facts[i].blocked.size() - 1) + " more)";
        }
        if (seen.empty()) continue;
        out.push_back("node " + host + ": its tasks are isolated from each other's GPUs by the " +
                      "device cgroup (" + seen +
                      "), so NCCL cannot use CUDA IPC or P2P/NVLink between them and falls back "
                      "to copies through host memory (much slower, and some NCCL versions fail "
                      "with ncclUnhandledCudaError); fix: srun --gres-flags=allow-task-sharing "
                      "(Slurm 23.11.4 or newer), which keeps each task's CUDA_VISIBLE_DEVICES but "
                      "lets it open its siblings' GPUs, or one task per node with all its GPUs");
    }
    return out;
}

std::vector<CheckProblem> nccl_problems(const std::vector<CheckRecord>& records,
                                        const std::vector<GpuFacts>& facts) {
    std::vector<CheckProblem> out;
    for (std::size_t i = 0; i < records.size() && i < facts.size(); ++i) {
        if (facts[i].nccl.empty() || facts[i].nccl == "ok") continue;
        const auto& r = records[i];
        out.push_back({"rank " + std::to_string(r.rank) + " on " + r.host,
                       "the NCCL all-reduce failed: " + facts[i].nccl_detail,
                       "run the check with NCCL_DEBUG=INFO to see the transport and where it "
                       "stopped; check this node's GPU (nvidia-smi -q) and its network to the "
                       "others (NCCL_SOCKET_IFNAME)",
                       {r.rank}});
    }
    return out;
}

std::string nccl_lines(const std::vector<CheckRecord>& records,
                       const std::vector<GpuFacts>& facts) {
    std::string out;
    for (std::size_t i = 0; i < records.size() && i < facts.size(); ++i) {
        if (facts[i].nccl.empty()) continue;
        out += "nccl: rank " + std::to_string(records[i].rank) + " on " + records[i].host +
               " (GPU " + records[i].gpu + "): all-reduce " +
               (facts[i].nccl == "ok" ? "ok, " : "FAILED: ") + facts[i].nccl_detail + "\n";
    }
    return out;
}

}  // namespace sddp::check

// SPDX-License-Identifier: Apache-2.0
#include "check/check_facts.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "check/check_gpu.hpp"
#include "core/base/numbers.hpp"
#include "os/host_name.hpp"

namespace sddp::check {
namespace {

std::string numeric(const sockaddr* sa, socklen_t len) {
    char buf[NI_MAXHOST] = {};
    if (::getnameinfo(sa, len, buf, sizeof buf, nullptr, 0, NI_NUMERICHOST) != 0) return "";
    return buf;
}

class Fd {
  public:
    explicit Fd(int fd) : fd_(fd) {}
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() {
        if (fd_ >= 0) ::close(fd_);
    }
    int get() const { return fd_; }

  private:
    int fd_;
};

std::string host_name() {
    const auto name = local_host_name();
    return name && !name->empty() ? *name : "unknown-host";
}

// The interface a packet to `address` leaves from: connect a UDP socket (no packet is sent),
// read the source address the kernel chose, and find the interface that owns it.
void route_interface(const std::string& address, std::uint16_t port, CheckRecord& r) {
    addrinfo hints{};
    hints.ai_flags = AI_NUMERICHOST;
    hints.ai_socktype = SOCK_DGRAM;
    addrinfo* res = nullptr;
    const std::string service = std::to_string(port == 0 ? 9 : port);
    if (::getaddrinfo(address.c_str(), service.c_str(), &hints, &res) != 0 || !res) {
        r.interface_error = "cannot parse " + address;
        return;
    }
    std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> own(res, ::freeaddrinfo);
    Fd s(::socket(res->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (s.get() < 0 || ::connect(s.get(), res->ai_addr, res->ai_addrlen) != 0) {
        r.interface_error = std::strerror(errno);
        return;
    }
    sockaddr_storage local{};
    socklen_t len = sizeof local;
    if (::getsockname(s.get(), reinterpret_cast<sockaddr*>(&local), &len) != 0) {
        r.interface_error = std::strerror(errno);
        return;
    }
    const std::string source = numeric(reinterpret_cast<sockaddr*>(&local), len);
    ifaddrs* ifs = nullptr;
    if (::getifaddrs(&ifs) != 0) {
        r.interface = source;
        return;
    }
    for (ifaddrs* i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr) continue;
        const socklen_t l =
            i->ifa_addr->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
        if (i->ifa_addr->sa_family != AF_INET && i->ifa_addr->sa_family != AF_INET6) continue;
        if (numeric(i->ifa_addr, l) == source) {
            r.interface = i->ifa_name;
            break;
        }
    }
    ::freeifaddrs(ifs);
    if (r.interface.empty()) r.interface = source;
}

// Whether the rendezvous could listen on `port` as the library does (any address, reuse).
std::string probe_port(std::uint16_t port) {
    Fd s(::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0));
    int family = AF_INET6;
    int fd = s.get();
    Fd s4(fd < 0 ? ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0) : -1);
    if (fd < 0) {
        family = AF_INET;
        fd = s4.get();
    }
    if (fd < 0) return std::string("cannot create a socket: ") + std::strerror(errno);
    int one = 1;
    (void)::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    int rc = 0;
    if (family == AF_INET6) {
        sockaddr_in6 a{};
        a.sin6_family = AF_INET6;
        a.sin6_addr = in6addr_any;
        a.sin6_port = htons(port);
        rc = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    } else {
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_ANY);
        a.sin_port = htons(port);
        rc = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    }
    if (rc != 0 || ::listen(fd, 1) != 0) return std::strerror(errno);
    return "";
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::string item;
    std::istringstream in(s);
    while (std::getline(in, item, sep)) out.push_back(item);
    return out;
}

std::string driver_version() {
    std::ifstream f("/proc/driver/nvidia/version");
    std::string line;
    if (!f || !std::getline(f, line)) return "none";
    // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar ..."
    auto at = line.find("Kernel Module");
    if (at == std::string::npos) return "unknown";
    std::istringstream rest(line.substr(at + 13));
    std::string v;
    rest >> v;
    return v.empty() ? "unknown" : v;
}

// The device this rank would use, chosen as the library chooses it (check_gpu.hpp).
void gpu_facts(const Identity& id, const EnvLookup& env, CheckRecord& r) {
    const auto visible = env("CUDA_VISIBLE_DEVICES");
    if (!visible || visible->empty() || *visible == "NoDevFiles") {
        r.gpu = "none";
        return;
    }
    const auto list = split(*visible, ',');
    const auto index = check_device(id, env);
    if (!index || *index < 0 || static_cast<std::size_t>(*index) >= list.size()) {
        r.gpu = "?";
        r.gpu_error =
            index ? "would use visible GPU " + std::to_string(*index) : index.error().message;
        return;
    }
    const std::string& entry = list[static_cast<std::size_t>(*index)];
    r.gpu_key = "cuda:" + entry;
    r.gpu = entry;
    // A numeric entry is the driver's index: its device file must open for this user.
    if (!entry.empty() && entry.find_first_not_of("0123456789") == std::string::npos) {
        const std::string dev = "/dev/nvidia" + entry;
        if (::access(dev.c_str(), F_OK) == 0) {
            r.gpu += " (" + dev + ")";
            const int fd = ::open(dev.c_str(), O_RDWR | O_CLOEXEC);
            if (fd < 0) {
                r.gpu_error = "cannot open its GPU " + dev + ": " + std::strerror(errno);
            } else {
                ::close(fd);
            }
        }
    }
}

// Which network stack this task is on: ranks with equal values reach each other on loopback.
std::string network_identity() {
    std::ifstream f("/proc/sys/kernel/random/boot_id");
    std::string boot;
    char ns[64] = {};
    if (!f || !std::getline(f, boot) || ::readlink("/proc/self/ns/net", ns, sizeof ns - 1) <= 0) {
        return "";
    }
    return boot + " " + ns;
}

}  // namespace

ResolveOutcome resolve_bounded(const std::string& name, std::chrono::milliseconds budget) {
    struct Shared {
        std::mutex mu;
        std::condition_variable cv;
        bool done = false;
        ResolveOutcome out;
    };
    auto shared = std::make_shared<Shared>();
    std::thread([shared, name] {
        ResolveOutcome out;
        addrinfo hints{};
        hints.ai_socktype = SOCK_STREAM;
        addrinfo* res = nullptr;
        const int rc = ::getaddrinfo(name.c_str(), nullptr, &hints, &res);
        if (rc != 0 || !res) {
            out.error = rc != 0 ? ::gai_strerror(rc) : "no address";
        } else {
            out.address = numeric(res->ai_addr, res->ai_addrlen);
            ::freeaddrinfo(res);
        }
        std::lock_guard<std::mutex> lock(shared->mu);
        shared->out = std::move(out);
        shared->done = true;
        shared->cv.notify_all();
    }).detach();
    std::unique_lock<std::mutex> lock(shared->mu);
    if (!shared->cv.wait_for(lock, budget, [&] { return shared->done; })) {
        return {"", "no answer from the resolver within " + std::to_string(budget.count()) + " ms"};
    }
    return shared->out;
}

CheckRecord gather_check_record(const Identity& id, const EnvLookup& env,
                                const std::string& library_version,
                                std::chrono::milliseconds budget) {
    CheckRecord r;
    r.rank = id.rank;
    r.world_size = id.world_size;
    r.node_rank = id.node_rank ? static_cast<std::int32_t>(*id.node_rank) : -1;
    r.host = host_name();
    const auto self = resolve_bounded(r.host, budget);
    r.host_address = self.address;
    r.host_error = self.error;
    r.master_addr = id.master_addr.value_or("");
    r.master_port = id.master_port.value_or(0);
    // One rank talks to nobody: MASTER_ADDR and the port are not used.
    if (!r.master_addr.empty() && id.world_size > 1) {
        const auto master = resolve_bounded(r.master_addr, budget);
        r.master_address = master.address;
        r.master_error = master.error;
        if (!r.master_address.empty()) {
            route_interface(r.master_address, static_cast<std::uint16_t>(r.master_port), r);
        }
    }
    if (id.rank == 0 && r.master_port != 0 && id.world_size > 1) {
        r.port_error = probe_port(static_cast<std::uint16_t>(r.master_port));
    }
    gpu_facts(id, env, r);
    r.versions = "libslurm_ddp " + library_version + ", driver " + driver_version();
    r.network = network_identity();
    return r;
}

}  // namespace sddp::check

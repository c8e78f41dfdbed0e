// SPDX-License-Identifier: Apache-2.0
#include "os/route_probe.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <ctime>
#include <new>

namespace sddp {
namespace {

std::optional<std::string> numeric(const sockaddr* sa) {
    std::array<char, INET6_ADDRSTRLEN> buf{};
    const void* src = nullptr;
    if (sa->sa_family == AF_INET) {
        src = &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr;
    } else if (sa->sa_family == AF_INET6) {
        src = &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr;
    } else {
        return std::nullopt;
    }
    if (inet_ntop(sa->sa_family, src, buf.data(), buf.size()) == nullptr) return std::nullopt;
    return std::string(buf.data());
}

// glibc's asynchronous look-up, so the caller can stop waiting. Its worker thread runs libc's
// code alone (no callback into ours: the plugin may be unloaded while it runs) and reads the
// request until it finishes, so a request still running at the deadline is left to it, leaked
// (once per task; the exec of the program ends it).
struct Request {
    std::string name;
    std::string service = "9";
    addrinfo hints{};
    gaicb cb{};
};

// The addresses of `host` (free with freeaddrinfo), or nullptr on failure or at the deadline.
addrinfo* lookup_until(const std::string& host, std::chrono::milliseconds timeout) {
    auto* req = new (std::nothrow) Request;
    if (req == nullptr) return nullptr;
    req->name = host;
    req->hints.ai_family = AF_UNSPEC;
    req->hints.ai_socktype = SOCK_DGRAM;
    req->cb.ar_name = req->name.c_str();
    req->cb.ar_service = req->service.c_str();
    req->cb.ar_request = &req->hints;
    gaicb* list[] = {&req->cb};
    if (getaddrinfo_a(GAI_NOWAIT, list, 1, nullptr) != 0) {
        delete req;
        return nullptr;
    }
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (gai_error(&req->cb) == EAI_INPROGRESS) {
        const auto left = deadline - std::chrono::steady_clock::now();
        if (left <= std::chrono::nanoseconds::zero()) break;
        const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
        const timespec wait{static_cast<time_t>(ns / 1000000000),
                            static_cast<long>(ns % 1000000000)};
        (void)gai_suspend(list, 1, &wait);  // returns on completion, timeout or a signal
    }
    if (gai_error(&req->cb) == EAI_INPROGRESS && gai_cancel(&req->cb) != EAI_CANCELED) {
        return nullptr;  // still running: the request stays allocated for it
    }
    addrinfo* res = gai_error(&req->cb) == 0 ? req->cb.ar_result : nullptr;
    if (res == nullptr && req->cb.ar_result != nullptr) freeaddrinfo(req->cb.ar_result);
    delete req;
    return res;
}

}  // namespace

std::vector<InterfaceAddress> read_interface_addresses() {
    std::vector<InterfaceAddress> out;
    ifaddrs* list = nullptr;
    if (getifaddrs(&list) != 0) return out;
    for (const ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
        if (i->ifa_addr == nullptr || (i->ifa_flags & IFF_UP) == 0) continue;
        auto addr = numeric(i->ifa_addr);
        if (!addr) continue;
        out.push_back({i->ifa_name, *addr, (i->ifa_flags & IFF_LOOPBACK) != 0});
    }
    freeifaddrs(list);
    return out;
}

std::optional<std::string> local_address_towards(const std::string& host,
                                                 std::chrono::milliseconds timeout) {
    addrinfo* res = lookup_until(host, timeout);
    if (res == nullptr) return std::nullopt;
    std::optional<std::string> out;
    for (const addrinfo* a = res; a != nullptr && !out; a = a->ai_next) {
        const int fd = ::socket(a->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0) continue;
        sockaddr_storage local{};
        socklen_t len = sizeof local;
        if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0 &&
            ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0) {
            out = numeric(reinterpret_cast<const sockaddr*>(&local));
        }
        ::close(fd);
    }
    freeaddrinfo(res);
    return out;
}

std::optional<std::string> interface_towards(const std::string& host, std::string* why) {
    const auto local = local_address_towards(host);
    if (!local) {
        if (why != nullptr)
            *why = "no route to " + host + " (does it resolve within " +
                   std::to_string(kRouteLookupTimeout.count()) + " ms?)";
        return std::nullopt;
    }
    auto name = interface_for_address(read_interface_addresses(), *local);
    if (!name && why != nullptr)
        *why = "the route to " + host + " leaves from " + *local +
               ", which is on no non-loopback interface";
    return name;
}

}  // namespace sddp

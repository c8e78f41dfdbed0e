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

std::optional<std::string> local_address_towards(const std::string& host) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_DGRAM;
    addrinfo* res = nullptr;
    if (getaddrinfo(host.c_str(), "9", &hints, &res) != 0 || res == nullptr) return std::nullopt;
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
        if (why != nullptr) *why = "no route to " + host + " (does it resolve?)";
        return std::nullopt;
    }
    auto name = interface_for_address(read_interface_addresses(), *local);
    if (!name && why != nullptr)
        *why = "the route to " + host + " leaves from " + *local +
               ", which is on no non-loopback interface";
    return name;
}

}  // namespace sddp

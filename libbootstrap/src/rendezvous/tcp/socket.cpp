// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/tcp/socket.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>

namespace sddp::tcp {

void Fd::reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
}

std::string errno_text(int err) {
    char buf[256];
    // GNU strerror_r returns the message pointer, which may not be `buf`.
    return ::strerror_r(err, buf, sizeof buf);
}

namespace {

void set_common_options(int fd, bool tcp) {
    const int one = 1;
    // Collective messages are small and latency-bound; never wait for Nagle.
    if (tcp) ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

Result<Fd> bind_and_listen(int family, std::uint16_t port, const std::string& who) {
    Fd fd(::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd.valid()) return make_error(Errc::io, "socket: " + errno_text(errno));
    const int one = 1;
    const int zero = 0;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    int rc;
    if (family == AF_INET6) {
        ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
        sockaddr_in6 a{};
        a.sin6_family = AF_INET6;
        a.sin6_addr = in6addr_any;
        a.sin6_port = htons(port);
        rc = ::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a);
    } else {
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_ANY);
        a.sin_port = htons(port);
        rc = ::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a);
    }
    if (rc != 0) {
        const int err = errno;
        if (err == EADDRINUSE) {
            return make_error(Errc::io, who + " cannot listen on TCP port " + std::to_string(port) +
                                            ": the port is already in use (another job or "
                                            "service holds it); pick a free port with "
                                            "--ddp=port=N or MASTER_PORT=N");
        }
        return make_error(Errc::io, who + " cannot bind TCP port " + std::to_string(port) + ": " +
                                        errno_text(err));
    }
    // Thousands of node leaders connect at once: ask for the largest backlog; the kernel clamps
    // it to net.core.somaxconn (4096 by default since Linux 5.4).
    if (::listen(fd.get(), 65535) != 0) {
        return make_error(Errc::io,
                          "listen on TCP port " + std::to_string(port) + ": " + errno_text(errno));
    }
    return fd;
}

}  // namespace

std::uint32_t accept_backlog() {
    std::uint32_t v = 4096;
    if (FILE* f = std::fopen("/proc/sys/net/core/somaxconn", "re")) {
        unsigned long n = 0;
        if (std::fscanf(f, "%lu", &n) == 1 && n > 0)
            v = static_cast<std::uint32_t>(std::min(n, 65535ul));
        (void)std::fclose(f);
    }
    return v;
}

Result<Fd> listen_tcp(std::uint16_t port, const std::string& who) {
    Result<Fd> v6 = bind_and_listen(AF_INET6, port, who);
    if (v6.ok()) return v6;
    // No IPv6 on this host: fall back to IPv4, but report a busy port as such.
    if (v6.error().message.find("already in use") != std::string::npos) return v6;
    return bind_and_listen(AF_INET, port, who);
}

SocketAddress abstract_address(const std::string& name) {
    SocketAddress out;
    sockaddr_un un{};
    un.sun_family = AF_UNIX;
    // Abstract namespace: a leading NUL, then the name, not NUL-terminated.
    const std::size_t n = std::min(name.size(), sizeof(un.sun_path) - 1);
    std::memcpy(un.sun_path + 1, name.data(), n);
    std::memcpy(&out.addr, &un, sizeof un);
    out.len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
    out.text = "@" + name.substr(0, n);
    return out;
}

Result<Fd> listen_abstract(const std::string& name) {
    Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd.valid()) return make_error(Errc::io, "socket(AF_UNIX): " + errno_text(errno));
    const SocketAddress a = abstract_address(name);
    if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&a.addr), a.len) != 0) {
        const int err = errno;
        return make_error(Errc::io, "node leader cannot listen on local socket " + a.text + ": " +
                                        errno_text(err) +
                                        (err == EADDRINUSE ? " (two node leaders with the same "
                                                             "node rank on one host?)"
                                                           : ""));
    }
    if (::listen(fd.get(), 65535) != 0) {
        return make_error(Errc::io, "listen on local socket " + a.text + ": " + errno_text(errno));
    }
    return fd;
}

namespace {

void append_addresses(const addrinfo* list, const std::string& text,
                      std::vector<SocketAddress>& out) {
    for (const addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
        if (ai->ai_addrlen > sizeof(sockaddr_storage)) continue;
        SocketAddress a;
        std::memcpy(&a.addr, ai->ai_addr, ai->ai_addrlen);
        a.len = ai->ai_addrlen;
        a.text = text;
        out.push_back(a);
    }
}

// One lookup on its own thread, so that the caller can stop waiting at the deadline. The state
// is shared: a lookup still stuck in the resolver when the caller gives up finishes (or not) on
// its detached thread and frees the state then. (glibc's getaddrinfo_a would do the same, but
// its internal thread is invisible to ThreadSanitizer, which then crashes.)
struct Lookup {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    int rc = EAI_AGAIN;
    addrinfo* res = nullptr;
    ~Lookup() {
        if (res != nullptr) ::freeaddrinfo(res);
    }
};

// 0 and the list in `out`, or a getaddrinfo error code; *timed_out at the deadline.
int lookup_until(const std::string& host, const std::string& service, Clock::time_point deadline,
                 std::vector<SocketAddress>& out, bool* timed_out) {
    auto state = std::make_shared<Lookup>();
    try {
        std::thread([state, host, service] {
            addrinfo hints{};
            hints.ai_family = AF_UNSPEC;
            hints.ai_socktype = SOCK_STREAM;
            addrinfo* res = nullptr;
            const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &res);
            const std::lock_guard<std::mutex> lock(state->m);
            state->rc = rc;
            state->res = res;
            state->done = true;
            state->cv.notify_all();
        }).detach();
    } catch (const std::system_error&) {
        return EAI_SYSTEM;  // no thread to spare: reported as a resolver failure
    }
    std::unique_lock<std::mutex> lock(state->m);
    if (!state->cv.wait_until(lock, deadline, [&] { return state->done; })) {
        *timed_out = true;
        return EAI_AGAIN;
    }
    append_addresses(state->res, host + ":" + service, out);
    return state->rc;
}

}  // namespace

Result<std::vector<SocketAddress>> resolve_tcp(const std::string& host, std::uint16_t port,
                                               Clock::time_point deadline) {
    const std::string service = std::to_string(port);
    std::vector<SocketAddress> out;
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST;
    addrinfo* res = nullptr;
    int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &res);
    if (rc == 0) {
        append_addresses(res, host + ":" + service, out);
        ::freeaddrinfo(res);
    } else if (rc == EAI_NONAME) {  // not an IP literal: a name to look up, within the deadline
        bool timed_out = false;
        rc = lookup_until(host, service, deadline, out, &timed_out);
        if (timed_out) {
            return make_error(Errc::timeout, "looking up master address '" + host +
                                                 "' did not finish before the rendezvous "
                                                 "deadline: check DNS on this node, or set "
                                                 "--ddp=addr= / MASTER_ADDR to an IP address");
        }
    }
    if (rc != 0) {
        return make_error(Errc::io,
                          "cannot resolve master address '" + host + "': " + ::gai_strerror(rc));
    }
    if (out.empty()) return make_error(Errc::io, "master address '" + host + "' has no address");
    return out;
}

ConnectOutcome connect_until(const SocketAddress& to, Clock::time_point deadline) {
    ConnectOutcome out;
    const int family = reinterpret_cast<const sockaddr*>(&to.addr)->sa_family;
    Fd fd(::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd.valid()) {
        out.err = errno;
        return out;
    }
    set_common_options(fd.get(), family != AF_UNIX);
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&to.addr), to.len) != 0) {
        if (errno != EINPROGRESS && errno != EAGAIN) {
            out.err = errno;
            return out;
        }
        pollfd p{fd.get(), POLLOUT, 0};
        for (;;) {
            const int n = ::poll(&p, 1, poll_timeout_ms(deadline));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                out.err = n == 0 ? ETIMEDOUT : errno;
                return out;
            }
            break;
        }
        int soerr = 0;
        socklen_t len = sizeof soerr;
        ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &soerr, &len);
        if (soerr != 0) {
            out.err = soerr;
            return out;
        }
    }
    out.fd = std::move(fd);
    return out;
}

std::optional<PeerCredentials> peer_credentials(int fd) {
    ucred c{};
    socklen_t len = sizeof c;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &len) != 0 || len != sizeof c) {
        return std::nullopt;
    }
    return PeerCredentials{static_cast<long>(c.pid), static_cast<unsigned>(c.uid)};
}

std::optional<std::string> foreign_local_peer(int fd) {
    const auto me = static_cast<unsigned>(::geteuid());
    const std::optional<PeerCredentials> peer = peer_credentials(fd);
    if (!peer) return "its credentials cannot be read (SO_PEERCRED: " + errno_text(errno) + ")";
    if (peer->uid == me) return std::nullopt;
    return "it is a process of uid " + std::to_string(peer->uid) + " (pid " +
           std::to_string(peer->pid) + "), and this step runs as uid " + std::to_string(me);
}

std::string peer_address(int fd) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "unknown";
    char host[INET6_ADDRSTRLEN] = {};
    if (ss.ss_family == AF_INET) {
        const auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
        ::inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
        return std::string(host) + ":" + std::to_string(ntohs(a->sin_port));
    }
    if (ss.ss_family == AF_INET6) {
        const auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
        ::inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
        return "[" + std::string(host) + "]:" + std::to_string(ntohs(a->sin6_port));
    }
    return "local";
}

int poll_timeout_ms(Clock::time_point deadline, int cap_ms) {
    const auto now = Clock::now();
    if (deadline <= now) return 0;
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(deadline - now).count();
    const long long ms = (us + 999) / 1000;
    return static_cast<int>(std::min<long long>(ms, cap_ms));
}

}  // namespace sddp::tcp

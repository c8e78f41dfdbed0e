// SPDX-License-Identifier: Apache-2.0
// Socket plumbing for the TCP rendezvous: an owning fd, listeners, non-blocking connects and the
// file-descriptor limit. Nothing here knows the protocol.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/base/result.hpp"

namespace sddp::tcp {

using Clock = std::chrono::steady_clock;

// Owns one file descriptor; closing is the destructor's job so no error path can leak one.
class Fd {
  public:
    Fd() = default;
    explicit Fd(int fd) : fd_(fd) {}
    Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
    Fd& operator=(Fd&& o) noexcept {
        if (this != &o) reset(std::exchange(o.fd_, -1));
        return *this;
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() { reset(); }

    int get() const { return fd_; }
    bool valid() const { return fd_ >= 0; }
    void reset(int fd = -1);

  private:
    int fd_ = -1;
};

std::string errno_text(int err);

// Listens on every interface (IPv6 dual-stack, else IPv4) at `port` with SO_REUSEADDR and the
// largest backlog the kernel allows. A busy port is an Errc::io naming `who` ("rank 0", or which
// node leader), the port and the fix.
Result<Fd> listen_tcp(std::uint16_t port, const std::string& who);
// This host's cap on a listen backlog (net.core.somaxconn), 4096 if it cannot be read.
std::uint32_t accept_backlog();

// Listens on a Linux abstract Unix socket: no file to clean up, gone when the fd closes.
Result<Fd> listen_abstract(const std::string& name);

struct SocketAddress {
    sockaddr_storage addr{};
    socklen_t len = 0;
    std::string text;  // "host:port" or "@name", for messages
};

// Every address `host` resolves to (TCP only). An IP literal is parsed without a lookup; a name
// is looked up asynchronously (getaddrinfo_a) and given up at `deadline` (Errc::timeout): a
// dead DNS server must not outlast the rendezvous timeout.
Result<std::vector<SocketAddress>> resolve_tcp(const std::string& host, std::uint16_t port,
                                               Clock::time_point deadline);
SocketAddress abstract_address(const std::string& name);

// Non-blocking connect that waits at most until `deadline`; the error keeps errno semantics
// in `err` so callers can tell "nobody listening yet" from real failures.
struct ConnectOutcome {
    Fd fd;
    int err = 0;
};
ConnectOutcome connect_until(const SocketAddress& to, Clock::time_point deadline);

// "ip:port" of the peer of a connected TCP socket, "local" for Unix sockets.
std::string peer_address(int fd);

// Who is at the other end of a connected Unix socket (SO_PEERCRED: the kernel's word, which the
// peer cannot forge). nullopt if the kernel will not say.
struct PeerCredentials {
    long pid = 0;
    unsigned uid = 0;
};
std::optional<PeerCredentials> peer_credentials(int fd);

// nullopt when the peer on the node-local socket `fd` runs as this process's user; else why it
// must not be talked to. An abstract socket's name is visible to every local user in
// /proc/net/unix and binding one needs no permission, so the name alone proves nothing.
std::optional<std::string> foreign_local_peer(int fd);

// Milliseconds until `deadline` for poll/epoll, rounded up and clamped to [0, cap].
int poll_timeout_ms(Clock::time_point deadline, int cap_ms = 1000 * 60 * 60);

}  // namespace sddp::tcp

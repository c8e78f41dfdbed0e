// SPDX-License-Identifier: Apache-2.0
#include "os/host_files.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace sddp {

std::optional<std::string> read_small_file(const std::string& path, std::size_t limit) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return std::nullopt;
    std::string out;
    char buf[4096];
    while (out.size() < limit) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    if (out.size() > limit) out.resize(limit);
    return out;
}

HostfileText read_hostfile(std::string_view distribution, const std::optional<std::string>& path) {
    HostfileText out;
    if (distribution.substr(0, distribution.find_first_of(":,")) != "arbitrary") return out;
    if (!path || path->empty()) return out;
    // In the plugin this runs in task_init, as the user: reading the user's file grants nothing.
    const int fd = ::open(path->c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        out.problem = std::string("cannot be opened (") + std::strerror(errno) + ")";
        return out;
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        out.problem = "is not a regular file";
    } else if (static_cast<std::uint64_t>(st.st_size) > kMaxHostfileBytes) {
        out.problem = "is larger than " + std::to_string(kMaxHostfileBytes) + " bytes";
    }
    if (!out.problem.empty()) {
        ::close(fd);
        return out;
    }
    std::string text;
    char buf[4096];
    while (text.size() <= kMaxHostfileBytes) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        text.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    if (text.size() > kMaxHostfileBytes) {
        out.problem = "grew beyond " + std::to_string(kMaxHostfileBytes) + " bytes while read";
        return out;
    }
    out.text = std::move(text);
    return out;
}

IdentityInputs gather_identity_inputs(const EnvLookup& env) {
    IdentityInputs in;
    auto hostfile = read_hostfile(env("SLURM_DISTRIBUTION").value_or(""), env("SLURM_HOSTFILE"));
    in.hostfile_text = std::move(hostfile.text);
    in.hostfile_problem = std::move(hostfile.problem);
    return in;
}

LaunchContext gather_launch_context(const EnvLookup& env, const StepFacts& facts) {
    LaunchContext ctx;
    auto hostfile = read_hostfile(facts.distribution, facts.hostfile);
    ctx.hostfile_text = std::move(hostfile.text);
    ctx.hostfile_problem = std::move(hostfile.problem);
    ctx.user_master_addr = env("MASTER_ADDR");
    ctx.user_master_port = env("MASTER_PORT");
    return ctx;
}

int probe_port_bind(std::uint16_t port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return errno;
    // Like the servers that will bind it (the rendezvous, torch's TCPStore): TIME_WAIT remnants of
    // an earlier step do not make the port busy.
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = htons(port);
    const int rc = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    const int err = rc == 0 ? 0 : errno;
    ::close(fd);
    return err;
}

}  // namespace sddp

#include "os/host_files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "core/port_choice.hpp"

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

std::optional<PortRange> read_ephemeral_ports() {
    auto text = read_small_file("/proc/sys/net/ipv4/ip_local_port_range", 64);
    if (!text) return std::nullopt;
    return parse_ephemeral_range(*text);
}

std::optional<std::string> read_hostfile_first_host(const std::optional<std::string>& path) {
    if (!path || path->empty()) return std::nullopt;
    // In the plugin this runs in task_init, as the user: reading the user's file grants nothing.
    auto text = read_small_file(*path, 1 << 16);
    if (!text) return std::nullopt;
    return first_host_in_hostfile(*text);
}

LaunchContext gather_launch_context(const EnvLookup& env, const StepFacts& facts) {
    LaunchContext ctx;
    ctx.ephemeral_ports = read_ephemeral_ports();
    ctx.hostfile_first_host = read_hostfile_first_host(facts.hostfile);
    ctx.user_master_addr = env("MASTER_ADDR");
    ctx.user_master_port = env("MASTER_PORT");
    return ctx;
}

}  // namespace sddp

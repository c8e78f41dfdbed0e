#include "api/host_facts.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "core/launch_env.hpp"
#include "core/port_choice.hpp"

namespace sddp::api {
namespace {

std::optional<std::string> read_small_file(const std::string& path, std::size_t limit) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
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

}  // namespace

std::string host_name() {
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "unknown-host";
    return buf;
}

std::optional<PortRange> ephemeral_ports() {
    auto text = read_small_file("/proc/sys/net/ipv4/ip_local_port_range", 64);
    if (!text) return std::nullopt;
    return parse_ephemeral_range(*text);
}

std::optional<std::string> hostfile_first_host(const EnvLookup& env) {
    const auto path = env("SLURM_HOSTFILE");
    if (!path || path->empty()) return std::nullopt;
    auto text = read_small_file(*path, 1 << 16);
    if (!text) return std::nullopt;
    return first_host_in_hostfile(*text);
}

}  // namespace sddp::api

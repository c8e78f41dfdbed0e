#include "api/host_facts.hpp"

#include <unistd.h>

#include "os/host_files.hpp"

namespace sddp::api {
std::string host_name() {
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "unknown-host";
    return buf;
}

std::optional<PortRange> ephemeral_ports() {
    return read_ephemeral_ports();
}

std::optional<std::string> hostfile_first_host(const EnvLookup& env) {
    return read_hostfile_first_host(env("SLURM_HOSTFILE"));
}

}  // namespace sddp::api

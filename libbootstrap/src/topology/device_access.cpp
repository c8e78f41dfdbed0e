// SPDX-License-Identifier: Apache-2.0
#include "topology/device_access.hpp"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "os/host_files.hpp"

namespace sddp {

DeviceOpen probe_device(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd >= 0) {
        ::close(fd);
        return DeviceOpen::accessible;
    }
    switch (errno) {
        case EPERM:
        case EACCES:
            return DeviceOpen::denied;
        case ENOENT:
        case ENXIO:
        case ENODEV:
            return DeviceOpen::absent;
        default:
            return DeviceOpen::other_error;
    }
}

DeviceAccess probe_peer_access(const std::vector<std::string>& peer_paths) {
    if (peer_paths.empty()) return DeviceAccess::unknown;
    for (const auto& p : peer_paths) {
        switch (probe_device(p)) {
            case DeviceOpen::accessible:
                break;
            case DeviceOpen::denied:
                return DeviceAccess::task;
            default:
                return DeviceAccess::unknown;
        }
    }
    return DeviceAccess::node;
}

DeviceAccess read_task_device_access() {
    const auto text = read_small_file("/proc/self/cgroup", std::size_t{64} * 1024);
    return text ? access_from_cgroups(*text) : DeviceAccess::unknown;
}

Result<std::vector<int>> read_task_cpus() {
    // Enough for 32k CPUs; CPU_ALLOC sizes the set dynamically so large nodes are not truncated.
    constexpr int kMaxCpus = 32768;
    cpu_set_t* set = CPU_ALLOC(kMaxCpus);
    if (set == nullptr) return make_error(Errc::internal, "cpu affinity: out of memory");
    const std::size_t size = CPU_ALLOC_SIZE(kMaxCpus);
    CPU_ZERO_S(size, set);
    std::vector<int> cpus;
    if (sched_getaffinity(0, size, set) != 0) {
        const int err = errno;
        CPU_FREE(set);
        return make_error(Errc::io, std::string("sched_getaffinity: ") + std::strerror(err));
    }
    for (int c = 0; c < kMaxCpus; ++c)
        if (CPU_ISSET_S(c, size, set)) cpus.push_back(c);
    CPU_FREE(set);
    return cpus;
}

}  // namespace sddp

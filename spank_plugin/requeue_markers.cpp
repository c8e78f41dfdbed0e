// SPDX-License-Identifier: Apache-2.0
#include "requeue_markers.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

namespace sddp::plugin {
namespace {

Error io_error(const std::string& what) {
    return Error{Errc::io, "requeue: " + what + ": " + std::strerror(errno)};
}

// The directory, checked: a real directory (never a link), root's, writable by nobody else.
Result<int> open_marker_dir(bool create) {
    if (create && ::mkdir(kRequeueMarkerDir, 0700) != 0 && errno != EEXIST) {
        return io_error(std::string("cannot create ") + kRequeueMarkerDir);
    }
    const int fd = ::open(kRequeueMarkerDir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return io_error(std::string("cannot open ") + kRequeueMarkerDir);
    struct stat st {};
    if (::fstat(fd, &st) != 0 || st.st_uid != ::geteuid() || (st.st_mode & 077) != 0) {
        ::close(fd);
        return make_error(Errc::invalid_input,
                          std::string("requeue: ") + kRequeueMarkerDir +
                              " is not a directory that only root (slurmstepd) can use; remove "
                              "it so that the plugin makes it again (0700, root)");
    }
    return fd;
}

// Removes the markers of `job` on `node`: of every run, or of runs before `before` only.
void remove_markers(int dir, const RequeueMarker& job, std::uint32_t before = UINT32_MAX) {
    const int copy = ::dup(dir);
    if (copy < 0) return;
    DIR* d = ::fdopendir(copy);
    if (d == nullptr) {
        ::close(copy);
        return;
    }
    std::vector<std::string> names;
    while (const dirent* e = ::readdir(d)) {
        const auto m = parse_requeue_marker_name(e->d_name);
        if (m && m->job_id == job.job_id && m->node == job.node && m->restart_count < before)
            names.emplace_back(e->d_name);
    }
    ::closedir(d);
    for (const auto& name : names) (void)::unlinkat(dir, name.c_str(), 0);
}

}  // namespace

Status write_requeue_marker(const RequeueMarker& marker) {
    SDDP_TRY(name, requeue_marker_name(marker));
    SDDP_TRY(dir, open_marker_dir(true));
    remove_markers(dir, marker, marker.restart_count);
    const int fd = ::openat(dir, name.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    Status st = ok_status();
    if (fd < 0) {
        st = io_error("cannot write " + std::string(kRequeueMarkerDir) + "/" + name);
    } else {
        ::close(fd);
    }
    ::close(dir);
    return st;
}

Result<bool> take_requeue_marker(const RequeueMarker& marker) {
    SDDP_TRY(name, requeue_marker_name(marker));
    struct stat dir_st {};
    if (::lstat(kRequeueMarkerDir, &dir_st) != 0 && errno == ENOENT) return false;
    auto dir = open_marker_dir(false);
    if (!dir) return dir.take_error();
    struct stat st {};
    Result<bool> found = false;
    if (::fstatat(*dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (S_ISREG(st.st_mode) && st.st_uid == ::geteuid() && st.st_nlink == 1) {
            found = true;
        } else {
            found = make_error(Errc::invalid_input,
                               "requeue: ignoring " + std::string(kRequeueMarkerDir) + "/" + name +
                                   ": not a marker slurmstepd wrote (a link, another owner's "
                                   "file or a second name of one)");
        }
    }
    remove_markers(*dir, marker);
    ::close(*dir);
    return found;
}

}  // namespace sddp::plugin

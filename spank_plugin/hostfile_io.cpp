// SPDX-License-Identifier: Apache-2.0
#include "hostfile_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace sddp::plugin {
namespace {

Status io_error(const std::string& what, const std::string& path) {
    return make_error(Errc::io,
                      "--ddp=hostfile: cannot " + what + " " + path + ": " + std::strerror(errno));
}

// The existing file must be ours and say what we would have written.
Status check_existing(const StepHostfile& file, std::uint32_t uid) {
    const int fd = ::open(file.path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return io_error("open the existing", file.path);
    struct stat st {};
    std::string text(file.text.size() + 1, '\0');
    ssize_t got = -1;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
        (st.st_uid == uid || st.st_uid == ::geteuid())) {
        got = ::read(fd, text.data(), text.size());
    }
    ::close(fd);
    if (got >= 0 && static_cast<std::size_t>(got) == file.text.size() &&
        text.compare(0, file.text.size(), file.text) == 0) {
        return ok_status();
    }
    return make_error(Errc::invalid_input,
                      "--ddp=hostfile: " + file.path +
                          " exists and is not this step's host file (another user's file, a "
                          "link, or other text); remove it and run the step again");
}

}  // namespace

Status write_step_hostfile(const StepHostfile& file, std::uint32_t uid) {
    const std::string tmp = file.path + ".tmp." + std::to_string(::getpid());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return io_error("create", tmp);
    // Where the hook runs as root, the file is still the job user's, as the tasks expect.
    if (::geteuid() == 0 && uid != 0 && ::fchown(fd, uid, static_cast<gid_t>(-1)) != 0) {
        Status st = io_error("give the job's user", tmp);
        ::close(fd);
        ::unlink(tmp.c_str());
        return st;
    }
    std::size_t done = 0;
    while (done < file.text.size()) {
        const ssize_t n = ::write(fd, file.text.data() + done, file.text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            Status st = io_error("write", tmp);
            ::close(fd);
            ::unlink(tmp.c_str());
            return st;
        }
        done += static_cast<std::size_t>(n);
    }
    if (::close(fd) != 0) {
        Status st = io_error("write", tmp);
        ::unlink(tmp.c_str());
        return st;
    }
    // link() fails with EEXIST instead of replacing: the first task of the node wins.
    const int linked = ::link(tmp.c_str(), file.path.c_str());
    const int link_errno = errno;
    ::unlink(tmp.c_str());
    if (linked == 0) return ok_status();
    errno = link_errno;
    if (link_errno != EEXIST) return io_error("create", file.path);
    return check_existing(file, uid);
}

void remove_step_hostfile(const std::string& path, std::uint32_t uid) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return;
    if (S_ISREG(st.st_mode) && st.st_uid == uid) ::unlink(path.c_str());
}

}  // namespace sddp::plugin

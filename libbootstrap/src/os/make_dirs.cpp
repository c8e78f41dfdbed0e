// SPDX-License-Identifier: Apache-2.0
#include "os/make_dirs.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

namespace sddp {
namespace {

constexpr mode_t kOthersWrite = S_IWGRP | S_IWOTH;

Error io_error(const std::string& what, int err) {
    return Error{Errc::io, what + ": " + std::strerror(err)};
}

std::string octal(mode_t mode) {
    char buf[8];
    (void)std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
    return buf;
}

const char* const kFix =
    "; give a directory of your own that only you can write, e.g. "
    "--ddp=debug=$HOME/ddp-debug (missing directories are created 0700)";

// A directory another user may write into lets that user put a link where the logs go.
Status check_private(const std::string& path, const struct stat& st) {
    if (st.st_uid != ::geteuid()) {
        return make_error(Errc::invalid_input, "--ddp=debug: " + path + " belongs to uid " +
                                                   std::to_string(st.st_uid) + ", not to you" +
                                                   kFix);
    }
    if ((st.st_mode & kOthersWrite) != 0) {
        return make_error(Errc::invalid_input, "--ddp=debug: " + path +
                                                   " is writable by other users (mode " +
                                                   octal(st.st_mode) + ")" + kFix);
    }
    return ok_status();
}

}  // namespace

Status make_directories(const std::string& path, mode_t mode) {
    if (path.empty()) return make_error(Errc::invalid_input, "empty directory path");
    // Each prefix ending before a '/', then the whole path.
    for (std::size_t pos = 1;; ++pos) {
        pos = path.find('/', pos);
        const std::string prefix = path.substr(0, pos);
        if (::mkdir(prefix.c_str(), mode) != 0 && errno != EEXIST) {
            const int err = errno;
            std::string what = "cannot create directory ";
            what += prefix;
            what += " (for " + path + ")";
            return io_error(what, err);
        }
        if (pos == std::string::npos) break;
    }
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        return make_error(Errc::io, path + " exists and is not a directory");
    }
    return ok_status();
}

Status make_private_directory(const std::string& path) {
    const std::size_t slash = path.rfind('/');
    if (path.empty() || path.front() != '/' || slash == 0 || slash + 1 == path.size()) {
        return make_error(Errc::invalid_input,
                          "--ddp=debug: " + path + " is not an absolute path below a directory");
    }
    const std::string parent = path.substr(0, slash);
    const std::string leaf = path.substr(slash + 1);
    if (auto st = make_directories(parent, 0700); !st) return st;

    // Above the parent: a directory others may write (but not a sticky one, where they cannot
    // rename what is ours) could have the parent swapped for theirs after the checks below.
    for (std::size_t pos = 1; pos < parent.size(); ++pos) {
        pos = parent.find('/', pos);
        if (pos == std::string::npos) break;
        const std::string above = parent.substr(0, pos);
        struct stat st {};
        if (::stat(above.c_str(), &st) != 0) return io_error("--ddp=debug: " + above, errno);
        if ((st.st_mode & kOthersWrite) != 0 && (st.st_mode & S_ISVTX) == 0) {
            return make_error(Errc::invalid_input, "--ddp=debug: " + above +
                                                       ", above the debug directory, is "
                                                       "writable by other users (mode " +
                                                       octal(st.st_mode) + ")" + kFix);
        }
    }

    const int dir = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return io_error("--ddp=debug: cannot open " + parent, errno);
    struct stat st {};
    Status result = ::fstat(dir, &st) == 0 ? check_private(parent, st)
                                           : Status(io_error("--ddp=debug: " + parent, errno));
    if (result && ::mkdirat(dir, leaf.c_str(), 0700) != 0 && errno != EEXIST) {
        result = io_error("--ddp=debug: cannot create directory " + path, errno);
    }
    if (result) {
        // Made by this task or another task of the step; a link there is never followed.
        const int fd = ::openat(dir, leaf.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            const int err = errno;
            result = (err == ELOOP || err == ENOTDIR)
                         ? Status(make_error(Errc::invalid_input,
                                             "--ddp=debug: " + path +
                                                 " exists and is a symbolic link or not a "
                                                 "directory; it was not followed" +
                                                 kFix))
                         : Status(io_error("--ddp=debug: cannot open " + path, err));
        } else {
            struct stat own {};
            result = ::fstat(fd, &own) == 0 ? check_private(path, own)
                                            : Status(io_error("--ddp=debug: " + path, errno));
            ::close(fd);
        }
    }
    ::close(dir);
    return result;
}

}  // namespace sddp

// SPDX-License-Identifier: Apache-2.0
#include "os/make_dirs.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

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

Error refused(const std::string& what) {
    return make_error(Errc::invalid_input, "--ddp=debug: " + what);
}

class Fd {
  public:
    explicit Fd(int fd = -1) : fd_(fd) {}
    ~Fd() {
        if (fd_ >= 0) ::close(fd_);
    }
    Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
    Fd& operator=(Fd&& o) noexcept {
        std::swap(fd_, o.fd_);
        return *this;
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return fd_; }

  private:
    int fd_;
};

// A directory another user may write into lets that user put a link where the logs go.
Status check_private(const std::string& path, const struct stat& st) {
    if (st.st_uid != ::geteuid()) {
        return refused(path + " belongs to uid " + std::to_string(st.st_uid) + ", not to you" +
                       kFix);
    }
    if ((st.st_mode & kOthersWrite) != 0) {
        return refused(path + " is writable by other users (mode " + octal(st.st_mode) + ")" +
                       kFix);
    }
    return ok_status();
}

// Above the parent, whoever may rename an entry could swap the parent for theirs after the
// checks, and the logs are opened later by name. Others writing is harmless only where the
// sticky bit stops them renaming what is not theirs, and the owner, whom it does not stop, is
// root or the caller (a sticky directory of another user's is still that user's to rearrange).
Status check_above(const std::string& dir, const struct stat& st) {
    if ((st.st_mode & kOthersWrite) == 0) return ok_status();
    const std::string what =
        dir + ", above the debug directory, is writable by other users (mode " + octal(st.st_mode);
    if ((st.st_mode & S_ISVTX) == 0) return refused(what + ")" + kFix);
    if (st.st_uid != 0 && st.st_uid != ::geteuid()) {
        return refused(what + ") and belongs to uid " + std::to_string(st.st_uid) +
                       ", who may rename what is in it despite the sticky bit" + kFix);
    }
    return ok_status();
}

// `name` in the directory `dir` (whose path is `dir_path`) as a directory, never through a
// symbolic link; created 0700 when missing. `leaf`: the step's own directory, which another
// user may have planted; a link on the way may be the site's own (/home to /gpfs/home), hence
// the hint to resolve it.
Result<Fd> open_below(const Fd& dir, const std::string& dir_path, const std::string& name,
                      bool leaf) {
    const std::string path = (dir_path == "/" ? "" : dir_path) + "/" + name;
    constexpr int kFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    int fd = ::openat(dir.get(), name.c_str(), kFlags);
    if (fd < 0 && errno == ENOENT) {
        // EEXIST: another task of the step made it meanwhile; the open below judges it.
        if (::mkdirat(dir.get(), name.c_str(), 0700) != 0 && errno != EEXIST) {
            return io_error("--ddp=debug: cannot create directory " + path, errno);
        }
        fd = ::openat(dir.get(), name.c_str(), kFlags);
    }
    if (fd >= 0) return Fd(fd);
    const int err = errno;
    if (err != ELOOP && err != ENOTDIR) return io_error("--ddp=debug: cannot open " + path, err);
    struct stat st {};
    const bool link =
        ::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
    if (!link) return refused(path + " exists and is not a directory" + kFix);
    if (leaf) return refused(path + " exists and is a symbolic link; it was not followed" + kFix);
    return refused(path +
                   " is a symbolic link; it was not followed, since whoever can change a "
                   "link on the way chooses where the logs go: give the path with its "
                   "links resolved (realpath prints it)" +
                   kFix);
}

}  // namespace

Status make_private_directory(const std::string& path) {
    const std::size_t slash = path.rfind('/');
    if (path.empty() || path.front() != '/' || slash == 0 || slash + 1 == path.size()) {
        return refused(path + " is not an absolute path below a directory");
    }
    std::vector<std::string> names;
    for (std::size_t at = 1; at <= path.size();) {
        const std::size_t end = std::min(path.find('/', at), path.size());
        const std::string name = path.substr(at, end - at);
        if (name == "." || name == "..") {
            std::string what = path;
            what +=
                " has a '" + name + "' component; give the path without it (realpath prints it)";
            return refused(what);
        }
        if (!name.empty()) names.push_back(name);
        at = end + 1;
    }

    // One component at a time from "/", each opened before the next is looked up in it: no name
    // is resolved twice, so nothing can be swapped between a check and its use here.
    Fd dir(::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir.get() < 0) return io_error("--ddp=debug: cannot open /", errno);
    std::string dir_path = "/";
    for (std::size_t i = 0; i < names.size(); ++i) {
        struct stat st {};
        if (::fstat(dir.get(), &st) != 0) return io_error("--ddp=debug: " + dir_path, errno);
        const bool leaf = i + 1 == names.size();  // dir_path is then the parent
        if (auto ok = leaf ? check_private(dir_path, st) : check_above(dir_path, st); !ok) {
            return ok;
        }
        SDDP_TRY(next, open_below(dir, dir_path, names[i], leaf));
        dir = std::move(next);
        if (dir_path != "/") dir_path += '/';
        dir_path += names[i];
    }
    // The step's directory, made by this task or another task of the step.
    struct stat own {};
    if (::fstat(dir.get(), &own) != 0) return io_error("--ddp=debug: " + path, errno);
    return check_private(path, own);
}

}  // namespace sddp

// SPDX-License-Identifier: Apache-2.0
#include "os/make_dirs.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace sddp {

Status make_directories(const std::string& path) {
    if (path.empty()) return make_error(Errc::invalid_input, "empty directory path");
    // Each prefix ending before a '/', then the whole path.
    for (std::size_t pos = 1;; ++pos) {
        pos = path.find('/', pos);
        const std::string prefix = path.substr(0, pos);
        if (::mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST) {
            const int err = errno;
            std::string what = "cannot create directory ";
            what += prefix;
            what += " (for " + path + "): ";
            what += std::strerror(err);
            return make_error(Errc::io, std::move(what));
        }
        if (pos == std::string::npos) break;
    }
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        return make_error(Errc::io, path + " exists and is not a directory");
    }
    return ok_status();
}

}  // namespace sddp

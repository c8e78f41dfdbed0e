// SPDX-License-Identifier: Apache-2.0
#include "stacks/stacks_trust.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <utility>

namespace sddp::stacks {
namespace {

std::string octal_mode(mode_t mode) {
    char buf[16];
    (void)std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
    return buf;
}

bool is_executable_file(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
           ::access(path.c_str(), X_OK) == 0;
}

std::optional<std::string> real_path(const std::string& path) {
    char buf[PATH_MAX];
    if (::realpath(path.c_str(), buf) == nullptr) return std::nullopt;
    return std::string(buf);
}

// The directories from "/" down to `resolved` and `resolved` itself (no symlink in it).
Result<std::vector<PathEntry>> chain_of(const std::string& resolved) {
    std::vector<std::string> paths{"/"};
    for (std::size_t slash = resolved.find('/', 1); slash != std::string::npos;
         slash = resolved.find('/', slash + 1)) {
        paths.push_back(resolved.substr(0, slash));
    }
    if (resolved != "/") paths.push_back(resolved);
    std::vector<PathEntry> chain;
    for (const auto& p : paths) {
        struct stat st {};
        if (::lstat(p.c_str(), &st) != 0) {
            return make_error(Errc::io, p + ": " + std::strerror(errno));
        }
        chain.push_back(PathEntry{p, st.st_uid, st.st_mode});
    }
    return chain;
}

// Every prefix of `path` as written ("/a", "/a/b", ..., `path`) resolved and its chain checked:
// a symlink anywhere is followed, and the folders of the link and of its target both count.
Result<std::string> check_path(const std::string& path) {
    if (path.empty() || path.front() != '/') {
        return make_error(Errc::invalid_input,
                          "'" + path +
                              "' is not an absolute path; as root only absolute paths "
                              "in root-owned folders are used");
    }
    std::vector<std::string> prefixes;
    for (std::size_t slash = path.find('/', 1); slash != std::string::npos;
         slash = path.find('/', slash + 1)) {
        prefixes.push_back(path.substr(0, slash));
    }
    prefixes.push_back(path);
    std::string last;
    for (const auto& prefix : prefixes) {
        if (prefix.empty()) continue;
        const auto resolved = real_path(prefix);
        if (!resolved) {
            std::string why = path;
            why += ": ";
            why += prefix;
            why += ": ";
            why += std::strerror(errno);
            return make_error(Errc::io, std::move(why));
        }
        SDDP_TRY(chain, chain_of(*resolved));
        if (auto why = untrusted_reason(chain); !why.empty()) {
            std::string message = path;
            message += ": ";
            message += why;
            message +=
                "; as root only files that root alone can have written are used (install it in a "
                "root-owned folder such as /usr/local/bin, or run slurm-ddp stacks as the job's "
                "user)";
            return make_error(Errc::invalid_input, std::move(message));
        }
        last = *resolved;
    }
    return last;
}

}  // namespace

std::string untrusted_reason(const std::vector<PathEntry>& chain) {
    for (const auto& e : chain) {
        if (e.uid != 0) {
            return e.path + " is owned by uid " + std::to_string(e.uid) + ", not root";
        }
        if ((e.mode & (S_IWGRP | S_IWOTH)) != 0 && !S_ISLNK(e.mode)) {
            return e.path + " is writable by group or others (mode " + octal_mode(e.mode) + ")";
        }
    }
    return "";
}

Result<std::string> trusted_executable(const std::string& path) {
    SDDP_TRY(resolved, check_path(path));
    if (!is_executable_file(resolved)) {
        return make_error(Errc::invalid_input, path + " is not an executable file");
    }
    return resolved;
}

Result<std::string> trusted_file(const std::string& path) {
    SDDP_TRY(resolved, check_path(path));
    struct stat st {};
    if (::stat(resolved.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
        return make_error(Errc::invalid_input, path + " is not a regular file");
    }
    return resolved;
}

std::vector<std::string> path_candidates(const std::string& name, const std::string& path_value) {
    std::vector<std::string> out;
    std::size_t start = 0;
    for (;;) {
        const auto colon = path_value.find(':', start);
        const auto dir = path_value.substr(
            start, colon == std::string::npos ? std::string::npos : colon - start);
        // A relative entry (or the empty one, ".") depends on the cwd: never a tool's place.
        if (!dir.empty() && dir.front() == '/') {
            std::string candidate = dir;
            candidate += '/';
            candidate += name;
            out.push_back(std::move(candidate));
        }
        if (colon == std::string::npos) break;
        start = colon + 1;
    }
    return out;
}

PickedTool pick_executable(const std::vector<std::string>& candidates, bool as_root) {
    PickedTool picked;
    for (const auto& c : candidates) {
        if (!is_executable_file(c)) continue;
        if (!as_root) {
            picked.path = c;
            return picked;
        }
        auto t = trusted_executable(c);
        if (t) {
            picked.path = *t;
            return picked;
        }
        picked.refused.push_back(t.error().message);
    }
    return picked;
}

std::string describe_refused(const std::vector<std::string>& refused) {
    if (refused.empty()) return "";
    std::string out = "not used as root: " + refused.front();
    if (refused.size() > 1) out += " (and " + std::to_string(refused.size() - 1) + " more)";
    return out;
}

}  // namespace sddp::stacks

// SPDX-License-Identifier: Apache-2.0
#include "os/shared_library.hpp"

#include <link.h>

#include <utility>

namespace sddp {
namespace {

std::string loaded_path(void* handle, const std::string& fallback) {
    link_map* map = nullptr;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name) {
        return map->l_name;
    }
    return fallback;
}

void append(std::string& list, const std::string& item, const char* separator) {
    if (!list.empty()) list += separator;
    list += item;
}

// The names of `required` that `handle` lacks, "a, b"; empty when it has them all.
std::string lacking(void* handle, const std::vector<std::string>& required) {
    std::string missing;
    for (const auto& name : required) {
        if (dlsym(handle, name.c_str()) == nullptr) append(missing, name, ", ");
    }
    return missing;
}

}  // namespace

SharedLibrary::~SharedLibrary() {
    if (handle_ != nullptr) dlclose(handle_);
}

SharedLibrary::SharedLibrary(SharedLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)),
      path_(std::move(other.path_)),
      was_loaded_(other.was_loaded_) {}

SharedLibrary& SharedLibrary::operator=(SharedLibrary&& other) noexcept {
    if (this != &other) {
        if (handle_ != nullptr) dlclose(handle_);
        handle_ = std::exchange(other.handle_, nullptr);
        path_ = std::move(other.path_);
        was_loaded_ = other.was_loaded_;
    }
    return *this;
}

SharedLibrary SharedLibrary::find_loaded(const std::vector<std::string>& candidates) {
    for (const auto& name : candidates) {
        if (void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_NOLOAD)) {
            return SharedLibrary(h, loaded_path(h, name), true);
        }
    }
    return SharedLibrary();
}

Result<SharedLibrary> SharedLibrary::open(const std::vector<std::string>& candidates,
                                          const Options& options) {
    std::string tried;
    // A held copy that lacks an entry point is named once: loading that name again would only
    // return the same copy.
    std::vector<bool> held(candidates.size(), false);
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        // The same flags: RTLD_GLOBAL promotes a copy held in a local scope.
        void* h = dlopen(candidates[i].c_str(), options.flags | RTLD_NOLOAD);
        if (h == nullptr) continue;
        held[i] = true;
        SharedLibrary lib(h, loaded_path(h, candidates[i]), true);
        const std::string missing = lacking(h, options.required);
        if (missing.empty()) return lib;
        append(tried, lib.path() + " (already loaded, lacks " + missing + ")", "; ");
        // Dropped: closing a held library only takes back this handle's reference.
    }
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        if (held[i]) continue;
        const std::string& name = candidates[i];
        void* h = dlopen(name.c_str(), options.flags);
        if (h == nullptr) {
            const char* e = dlerror();
            append(tried, name + " (" + (e ? e : "cannot be loaded") + ")", "; ");
            continue;
        }
        SharedLibrary lib(h, loaded_path(h, name), false);
        const std::string missing = lacking(h, options.required);
        if (missing.empty()) return lib;
        append(tried, lib.path() + " (lacks " + missing + ")", "; ");
        // A library loaded into the global scope may have started threads or registered
        // handlers: it stays. A local one is closed with `lib`.
        if ((options.flags & RTLD_GLOBAL) != 0) lib.keep();
    }
    if (candidates.empty()) tried = "no candidate";
    return make_error(Errc::unsupported, tried);
}

void* SharedLibrary::symbol(const char* name, std::string* missing) const {
    void* p = handle_ != nullptr ? dlsym(handle_, name) : nullptr;
    if (p == nullptr && missing != nullptr) append(*missing, name, ", ");
    return p;
}

void SharedLibrary::keep() {
    handle_ = nullptr;
}

}  // namespace sddp

// SPDX-License-Identifier: Apache-2.0
// A library loaded at run time (dlopen): the one loader behind PMI2, PMIx, NCCL, the CUDA
// runtime and the plugin's hwloc.
//
// Why one: each of those is optional on a node, so each is loaded by name when first needed
// and turned into a message when absent. The rules they share live here: a copy the process
// already holds wins over a new one (RTLD_NOLOAD first: two NCCLs or two CUDA runtimes in one
// process do not share state), a candidate that lacks a required entry point is passed over
// for the next, and the error names every candidate tried and why it was passed over.
#pragma once

#include <dlfcn.h>

#include <string>
#include <vector>

#include "core/base/result.hpp"

namespace sddp {

class SharedLibrary {
  public:
    struct Options {
        // dlopen's flags for a candidate not loaded yet.
        int flags = RTLD_NOW | RTLD_LOCAL;
        // Entry points a candidate must have; one that lacks any is passed over.
        std::vector<std::string> required;
    };

    SharedLibrary() = default;
    ~SharedLibrary();
    SharedLibrary(SharedLibrary&& other) noexcept;
    SharedLibrary& operator=(SharedLibrary&& other) noexcept;
    SharedLibrary(const SharedLibrary&) = delete;
    SharedLibrary& operator=(const SharedLibrary&) = delete;

    // Each candidate is a SONAME (the loader's search: LD_LIBRARY_PATH, ldconfig) or a path.
    // First the candidates the process already holds (RTLD_NOLOAD), in order; then each one
    // loaded in order. Errc::unsupported when none fits, its message "NAME (why); NAME (why)".
    static Result<SharedLibrary> open(const std::vector<std::string>& candidates,
                                      const Options& options);
    static Result<SharedLibrary> open(const std::vector<std::string>& candidates) {
        return open(candidates, Options{});
    }
    // Only among what the process holds already (RTLD_NOLOAD); an empty handle when none is.
    static SharedLibrary find_loaded(const std::vector<std::string>& candidates);

    bool is_open() const { return handle_ != nullptr; }
    // The file loaded (from the loader's link map), else the candidate's name.
    const std::string& path() const { return path_; }
    // It was in the process before this handle was opened.
    bool was_loaded() const { return was_loaded_; }

    // dlsym; nullptr when absent. `missing`, when given, collects absent names ("a, b").
    void* symbol(const char* name, std::string* missing = nullptr) const;
    template <typename FnPtr>
    bool bind(const char* name, FnPtr& out, std::string* missing = nullptr) const {
        // dlsym returns void*; POSIX guarantees the conversion to a function pointer works.
        out = reinterpret_cast<FnPtr>(symbol(name, missing));
        return out != nullptr;
    }

    // Leaves the library loaded for the process's life (its functions may still run on other
    // threads, or it has started threads of its own); the handle forgets it.
    void keep();

  private:
    SharedLibrary(void* handle, std::string path, bool was_loaded)
        : handle_(handle), path_(std::move(path)), was_loaded_(was_loaded) {}
    void* handle_ = nullptr;
    std::string path_;
    bool was_loaded_ = false;
};

}  // namespace sddp

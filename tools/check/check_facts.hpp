// SPDX-License-Identifier: Apache-2.0
// The I/O half of `slurm-ddp check`: what this task can see of its node, each fact bounded.
// The judging is pure and lives in core/check/.
#pragma once

#include <chrono>
#include <string>

#include "core/base/env_lookup.hpp"
#include "core/check/check_record.hpp"
#include "core/task/identity.hpp"

namespace sddp::check {

struct ResolveOutcome {
    std::string address;  // first address, numeric; empty on failure
    std::string error;    // resolver message, or "no answer within N ms"
};

// getaddrinfo on a detached thread, given up after `budget`: a dead DNS server must not make
// the check outlast its bound (the thread finishes on its own and owns its state).
ResolveOutcome resolve_bounded(const std::string& name, std::chrono::milliseconds budget);

// Everything in CheckRecord for this task. `library_version`: sddp_version() of the library
// this process uses.
CheckRecord gather_check_record(const Identity& id, const EnvLookup& env,
                                const std::string& library_version,
                                std::chrono::milliseconds budget);

}  // namespace sddp::check

// SPDX-License-Identifier: Apache-2.0
// Whether the TCP rendezvous may run without the step secret: only when the user opted in.
//
// Without the secret anyone who reaches MASTER_PORT (derivable from the public job id) can join
// as any rank or hand out a forged NCCL id, so the default is to refuse. A task that srun --ddp
// launched (SLURM_DDP_STEP set) should always have the secret: its absence means the
// configuration is broken, and the error says where to look.
#pragma once

#include <optional>
#include <string>

#include "core/base/result.hpp"

namespace sddp {

struct SecretFacts {
    bool have_secret = false;
    bool allow_unauthenticated = false;   // the option field or the environment variable
    std::optional<std::string> ddp_step;  // SLURM_DDP_STEP, when set
};

// ok, or an Errc::auth error naming SLURM_DDP_SECRET, the likely causes and the fixes.
Status check_secret_policy(const SecretFacts& f);

// SLURM_DDP_ALLOW_UNAUTHENTICATED: "1" opts in, unset/empty/"0" does not; anything else is an
// error (a typo must not silently keep or drop the protection).
Result<bool> parse_allow_unauthenticated(const std::optional<std::string>& value);

}  // namespace sddp

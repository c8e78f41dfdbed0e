// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/protocol/secret_policy.hpp"

#include "core/base/numbers.hpp"
#include "core/contract/contract.hpp"

namespace sddp {

Status check_secret_policy(const SecretFacts& f) {
    if (f.have_secret || f.allow_unauthenticated) return ok_status();
    if (f.ddp_step) {
        return make_error(
            Errc::auth,
            std::string(contract::kSecretVar) + " is not set, yet " + contract::kStepVar + "=" +
                quote_value(*f.ddp_step) +
                " says srun --ddp launched this task; the TCP rendezvous refuses to run "
                "unauthenticated. Likely causes: the plugstack.conf line for spank_ddp.so "
                "differs between the host that ran srun and the compute nodes (for example "
                "default=on only on the compute nodes, so srun did not create the secret): "
                "use the same plugstack arguments everywhere; or a container runtime or an "
                "--export/env wrapper dropped " +
                contract::kSecretVar +
                " from the task's environment: let it through (it is per step, never reused)");
    }
    return make_error(
        Errc::auth,
        std::string(contract::kSecretVar) +
            " is not set, so the TCP rendezvous would be unauthenticated (anyone who reaches "
            "MASTER_PORT could join as any rank); refusing. Launch with srun --ddp (which "
            "creates a per-step secret), or export the same 64 hex digits as " +
            contract::kSecretVar +
            " on every rank (e.g. from `openssl rand -hex 32`), or, only where every process "
            "that can reach the port is trusted, opt in with " +
            contract::kAllowUnauthenticatedVar + "=1 (or sddp_options.allow_unauthenticated = 1)");
}

Result<bool> parse_allow_unauthenticated(const std::optional<std::string>& value) {
    if (!value || value->empty() || *value == "0") return false;
    if (*value == "1") return true;
    return make_error(Errc::invalid_input, std::string(contract::kAllowUnauthenticatedVar) + "=" +
                                               quote_value(*value) + " is not 0 or 1");
}

}  // namespace sddp

// SPDX-License-Identifier: Apache-2.0
// Which rendezvous transport a rank uses.
//
// auto: PMI2 under `srun --mpi=pmi2`, PMIx under `srun --mpi=pmix` (no port to agree on, nothing
// to listen on), else TCP. SLURM_DDP_TRANSPORT=tcp|pmi2|pmix (or the API option) forces one; a
// forced transport that cannot work is an error, never a silent fallback. Auto falls back from
// PMI2/PMIx to TCP only when that library is missing and MASTER_ADDR/MASTER_PORT are known. Every
// rank decides from the same kind of environment, so all ranks of a step pick the same transport.
#pragma once

#include <memory>
#include <optional>
#include <string_view>

#include "core/base/env_lookup.hpp"
#include "core/base/result.hpp"
#include "rendezvous/transport.hpp"

namespace sddp {

enum class TransportChoice { automatic, tcp, pmi2, pmix };

// The option wins over the environment when it is not automatic. Bad SLURM_DDP_TRANSPORT ->
// error listing the valid values.
Result<TransportChoice> resolve_transport_choice(TransportChoice option, const EnvLookup& env);

// The TCP rendezvous can run from the environment alone: MASTER_ADDR, MASTER_PORT and the step's
// secret (or the unauthenticated opt-in), as srun --ddp provides them.
bool tcp_environment(const EnvLookup& env);

// What auto would pick, without loading anything (for messages and tests): TCP where
// tcp_environment holds, else PMI2 under srun --mpi=pmi2, else PMIx under srun --mpi=pmix, else
// TCP (which then names what is missing).
TransportChoice auto_transport(const EnvLookup& env);

Result<std::unique_ptr<Transport>> select_transport(TransportChoice choice,
                                                    const RendezvousConfig& cfg,
                                                    const EnvLookup& env);

}  // namespace sddp

// SPDX-License-Identifier: Apache-2.0
// The preflight exchange: how every rank learns the verdict on the records of all ranks.
//
// Two ways, chosen by what the launcher already told every rank:
//   - the launcher gave node and local ranks (srun --ddp, Slurm, torchrun): a gather to rank 0,
//     which checks the records and broadcasts only its verdict. Rank 0 receives N records and
//     sends one short frame per child, so the cost grows with N, not with N * nodes.
//   - it did not (mpirun, bare RANK/WORLD_SIZE): an allgather, because every rank derives its
//     node from the host names of all ranks. Fine for the job sizes such launches have.
// Both give every rank the same verdict, naming the ranks, host and fix.
#pragma once

#include <optional>

#include "core/base/result.hpp"
#include "rendezvous/protocol/preflight.hpp"
#include "rendezvous/transport.hpp"

namespace sddp {

struct PreflightOutcome {
    Status verdict = ok_status();      // check_preflight on all records: the same on every rank
    std::optional<NodeLayout> layout;  // only when asked for (derived from the host names)
};

// Transport failures (a lost peer, a timeout) are the error; a failed check is the verdict.
Result<PreflightOutcome> run_preflight(Transport& t, const PreflightRecord& mine, bool want_layout);

}  // namespace sddp

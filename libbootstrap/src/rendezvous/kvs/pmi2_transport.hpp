// SPDX-License-Identifier: Apache-2.0
// The PMI2 rendezvous: Slurm's own key-value space under `srun --mpi=pmi2`.
//
// No port, no MASTER_ADDR: slurmstepd already connects every task (PMI_FD) and exchanges the
// key-value pairs between nodes at each fence. Collectives are put + fence + get:
//   broadcast   the root puts its record, all fence, the others get it (one get per chunk).
//   allgather   every rank puts, all fence, every rank gets every record: world_size gets per
//               rank, each a local round trip to slurmstepd (fine for thousands of ranks; TCP
//               scales better for huge allgathers).
//   gather      every rank puts, all fence, only rank 0 gets: world_size gets on rank 0 alone.
//   barrier     a fence.
// Every call is bounded by cfg.timeout through Pmi2Worker (see pmi2_worker.hpp for what a
// timeout leaves behind); abort() cannot notify the peers (PMI2_Abort would exit this process),
// so they give up at their own deadline.
//
// PMI2 is initialised once per process (PMI2 cannot be initialised twice) and reused by later
// transports, and is not finalised: Slurm does not require it, and finalising would make a
// second sddp_init in the same process impossible. If the program initialised PMI2 itself
// (an MPI library did), that session is reused.
#pragma once

#include <memory>

#include "core/base/env_lookup.hpp"
#include "core/base/result.hpp"
#include "rendezvous/transport.hpp"

namespace sddp {

// True under `srun --mpi=pmi2`: Slurm's pmi2 plugin gives every task PMI_FD, PMI_RANK, PMI_SIZE
// (and PMI_JOBID); SLURM_JOB_ID tells it apart from MPICH's hydra, which uses the same names.
bool pmi2_environment(const EnvLookup& env);

Result<std::unique_ptr<Transport>> make_pmi2_transport(const RendezvousConfig& cfg,
                                                       const EnvLookup& env);

}  // namespace sddp

// SPDX-License-Identifier: Apache-2.0
// The PMIx rendezvous: the launcher's PMIx key-value space under `srun --mpi=pmix` (or any PMIx
// launcher: prterun, mpirun of Open MPI 5).
//
// As with PMI2 there is no port and no MASTER_ADDR: the PMIx server in slurmstepd connects every
// task and moves the data between nodes at a fence. Collectives are put + commit + fence + get,
// with every record one byte-object value under the key "sddp.<seq>" (pmix::key below):
//   broadcast   the root puts, all fence, the others get the root's key.
//   allgather   every rank puts, all fence (collecting the data on every node), every rank gets
//               every record: local lookups in its own PMIx client after the fence.
//   gather      every rank puts, all fence, only rank 0 gets.
//   barrier     a fence (collecting, like the others: see fence() in the .cpp).
// Every call is bounded by cfg.timeout: PMIx calls run on a worker thread (pmi2_worker.hpp,
// shared with PMI2), and a call still blocked at the deadline leaves PMIx unusable in this
// process with a clear error. abort() does not call PMIx_Abort (it would end the whole step);
// the peers give up at their own deadline.
//
// PMIx is initialised once per process and reused (PMIx_Init is reference counted, so a program
// whose MPI library already initialised PMIx shares that session) and never finalised, so that a
// second sddp_init in the same process works.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/base/env_lookup.hpp"
#include "core/base/result.hpp"
#include "rendezvous/transport.hpp"

namespace sddp {

// True when a PMIx server started this task: PMIX_RANK and PMIX_NAMESPACE are set and so is one
// of the server URIs the client connects to (PMIX_SERVER_URI, _URI2, _URI21, _URI3, _URI4,
// _URI41: which ones depends on the server's PMIx version).
bool pmix_environment(const EnvLookup& env);

Result<std::unique_ptr<Transport>> make_pmix_transport(const RendezvousConfig& cfg,
                                                       const EnvLookup& env);

}  // namespace sddp

namespace sddp::pmix {

// PMIx values are typed, so a record travels as one byte object (no hex, no chunks, unlike PMI2).
// Keys are per process, so they need not carry the rank; they carry a sequence number so that no
// key is ever put twice (a second put would replace the first before a slow peer read it). Keys
// starting with "pmix" are reserved by the standard; ours never do.
std::string key(std::uint64_t seq);

// Far above any preflight or id record; keeps one rank's mistake from flooding every node.
inline constexpr std::size_t kMaxRecordBytes = 16u << 20;

}  // namespace sddp::pmix

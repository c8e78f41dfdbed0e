// SPDX-License-Identifier: Apache-2.0
// When a node leader first knocks on rank 0: pacing the join so rank 0's accept queue never
// overflows.
//
// Why: every leader of a large job starts within a second. Rank 0 listens with a backlog that
// the kernel caps at net.core.somaxconn (4096 by default, 128 on older kernels); SYNs beyond it
// are dropped and the client's TCP retries after 1 s, then 3 s, 7 s. At 12.5k leaders that turns
// a one-second join into seven. Leaders instead come in batches of half the backlog, node rank
// order, one batch per `batch * kAdmitCost` (rank 0 admits a leader in well under 100 us), so
// the queue drains before the next batch arrives. Jobs with fewer leaders than a batch never
// wait. Pure: the leader reads somaxconn (its own node's, the same image as rank 0's) and sleeps.
// In the leaders' tree (rendezvous/protocol/leader_tree.hpp) a parent serves only its k children,
// so the index is the leader's position among its siblings (< k): with k <= 2048 nobody waits, and
// the admission work is spread over every leader instead of rank 0.
#pragma once

#include <chrono>
#include <cstdint>

namespace sddp {

// Assumed time rank 0 needs to admit one leader (accept, challenge, two HMACs, welcome): the
// measured 90 us on two shared cores, rounded up (bench/model/scale_model.py calibrates it).
inline constexpr std::chrono::microseconds kAdmitCost{100};

// The smallest batch: the first this many leaders never wait, whatever the backlog.
inline constexpr std::uint32_t kMinJoinBatch = 16;

// The delay before the leader with index `node_rank` among its parent's children (in a star:
// its node rank) first connects, given the parent's accept backlog.
// Zero for the first batch; nondecreasing in node_rank; the last leader of N waits about
// N * kAdmitCost, the time rank 0 needs to admit everyone anyway.
std::chrono::microseconds join_delay(std::uint32_t node_rank, std::uint32_t backlog);

// How long a refused client sleeps before its next connect, before jitter: `backoff` (doubling
// from `first` up to the caller's cap) but never more than a quarter of the time it has already
// waited, nor less than `first`. Plain doubling sleeps as long again as everything waited so
// far, so a parent that starts listening just after a retry is found up to twice as late as it
// came; this keeps the lateness to a quarter, and still reaches the cap (one connect a second
// per leader at rank 0) after a few seconds of a parent that is really not there.
std::chrono::microseconds retry_pause(std::chrono::microseconds backoff,
                                      std::chrono::microseconds waited,
                                      std::chrono::microseconds first);

}  // namespace sddp

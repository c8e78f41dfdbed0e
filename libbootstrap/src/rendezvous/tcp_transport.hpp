// SPDX-License-Identifier: Apache-2.0
// The TCP rendezvous: rank 0 serves, the others find it at MASTER_ADDR:MASTER_PORT.
//
// Topology. Rank 0 is the root. On every node, local rank 0 is the node leader: it listens on an
// abstract Unix socket (named from the step tag, a hash of the secret, the port and the node
// rank, so no port or file is needed) and is the only rank of its node that talks TCP; the
// node's other ranks connect to their leader. Without local information (local_world_size == 1)
// every rank leads a node of one.
// Between nodes: given cfg.leaders (every node's host and port, by node rank: the api derives
// them from the step's node list and MASTER_PORT), the leaders form a k-ary tree
// (rendezvous/protocol/leader_tree.hpp, k = cfg.tree_fanout, SLURM_DDP_TREE_FANOUT, default 16):
// node n's leader connects to node (n-1)/k's and listens on its own host at the same port for nodes
// k*n+1 .. k*n+k. Without cfg.leaders (or with nodes <= k+1) every leader connects to rank 0: a
// star. Every link is authenticated the same way; a leader's join returns once its whole subtree
// has joined (each leader reports every rank below it, then "complete", to its parent). Rank 0 and
// the leaders each run one epoll loop over non-blocking sockets, inside the calls.
//
// Every connection starts with a mutual HMAC-SHA256 challenge-response over the per-step secret
// (see tcp/auth.hpp); peers with the wrong secret, step, world size, or a duplicate or
// out-of-range rank are refused with a reason and logged, and the job carries on. Unauthenticated
// connections are capped in number and in buffered bytes (4 KiB) and dropped after a handshake
// deadline (half the timeout, at most 5 s), so scanners, garbage and silent clients cost little;
// when the table is full the busiest address's oldest handshake gives way
// (rendezvous/protocol/admission.hpp). A client believes a refusal only with the server's proof of
// the secret, and every frame after the handshake carries a MAC (tcp/auth.hpp).
//
// Message rounds (hops counted on the longest path of the star, leader = one extra hop; the tree
// adds one TCP hop per level, ceil(log_k(nodes)) levels):
//   join        TCP/Unix connect, challenge, hello, welcome (1.5 RTT per link), plus one `joined`
//               message per local rank from each leader so rank 0 always knows exactly who is
//               missing. The call returns once this rank's subtree (rank 0: the world) is in.
//   broadcast   from rank 0: one downward pass (2 hops). From rank r: up, then down (4 hops).
//   allgather   records merge upward per node (2 hops), the full result comes down (2 hops);
//               the result is encoded once at rank 0 and its bytes shared by all send queues,
//               and leaders forward the received frame without re-encoding.
//   barrier     empty up and down passes (4 hops).
//
// Expected cost at 100k ranks, 8 per node (12.5k node leaders):
//   - rank 0 holds 12.5k TCP sockets (the soft fd limit is raised to the hard limit, which must
//     be above ~13k) and computes 25k HMACs to admit them (~50 ms of CPU). Leaders come in
//     batches of half the accept backlog (rendezvous/protocol/join_pacing.hpp), so the queue does
//     not overflow into SYN retransmits; a refused or dropped connect retries from 1 ms, doubling,
//     jittered.
//   - join: rank 0 receives 12.5k hellos and 87.5k 4-byte `joined` entries (~3 MB).
//   - broadcast of a 128-byte NCCL id: rank 0 sends 12.5k * ~160 B = 2 MB; each leader 7 * 160 B.
//     Latency is a few RTTs plus rank 0's serial send loop (tens of ms).
//   - gather (the preflight): 100k records up, one short verdict broadcast down: ~7 MB in, 12.5k
//     small frames out.
//   - allgather of R-byte records: 100k*R bytes up; in a star rank 0 then sends the
//     (100k*(R+4))-byte result to each of 12.5k leaders (85 GB for R = 64). In the k = 16 tree
//     rank 0 and every leader send it to at most 16 child leaders (6.8 MB each for R = 64), four
//     levels deep: about 0.1 s (bench/model/scale_model.py). A result over 256 MiB is refused
//     (Errc::too_large).
//   - with the tree rank 0 admits only its k child leaders (25k HMACs spread over all leaders).
//   - memory at rank 0: one copy of the result plus per-socket kernel buffers.
//
// Failures name ranks and hosts: a rank that never joins -> Errc::timeout at rank 0 listing the
// missing ranks ("3,7-9") and incomplete nodes (tree: the child nodes that never came or whose
// subtree is incomplete), propagated to all; a rank that dies -> its parent (and, for a middle
// leader, its child leaders) report Errc::peer_lost naming it; rank 0 dying -> everyone reports
// Errc::peer_lost naming rank 0 at MASTER_ADDR:port. Servers time out slightly before their
// children so the precise diagnosis reaches every rank first. Any failure is sent down and up the
// tree as an abort carrying the error code and message, so every rank fails with the same reason.
#pragma once

#include <memory>

#include "core/base/result.hpp"
#include "rendezvous/transport.hpp"

namespace sddp {

// Joins the rendezvous (bounded by cfg.timeout, like every later call) and returns a Transport
// whose connections stay open until it is destroyed. An empty cfg.secret is refused unless
// cfg.allow_unauthenticated: then anyone who can reach the port can join (the caller warns;
// see tcp_transport_is_authenticated).
Result<std::unique_ptr<Transport>> make_tcp_transport(const RendezvousConfig& cfg);

inline bool tcp_transport_is_authenticated(const RendezvousConfig& cfg) {
    return !cfg.secret.empty();
}

}  // namespace sddp

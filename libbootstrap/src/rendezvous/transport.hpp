// SPDX-License-Identifier: Apache-2.0
// The rendezvous transport: how ranks exchange small opaque records before NCCL exists.
//
// Every backend (TCP, PMI2) implements these four collectives. They move bytes only; what the
// bytes mean (NCCL unique ids, preflight records) is decided by the caller. Every call is bounded
// by the deadline given at construction and fails with Errc::timeout naming the ranks that did
// not arrive, rather than waiting forever.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/bytes.hpp"
#include "core/base/result.hpp"
#include "core/contract/contract.hpp"
#include "core/options/option_params.hpp"

namespace sddp {

class Transport {
  public:
    virtual ~Transport() = default;

    virtual int rank() const = 0;
    virtual int world_size() const = 0;
    virtual std::string_view name() const = 0;  // "tcp" or "pmi2", for messages

    // Root's `bytes` reach every rank; on other ranks `bytes` is replaced.
    virtual Status broadcast(Bytes& bytes, int root) = 0;
    // Every rank contributes `mine`; all receive every rank's record, indexed by rank.
    // Costly at scale (every node receives every record); see gather.
    virtual Result<std::vector<Bytes>> allgather(std::span<const std::uint8_t> mine) = 0;
    // Every rank contributes `mine`; rank 0 receives every record, indexed by rank, the others an
    // empty vector. Nothing comes back down: rank 0 answers, where it must, with a broadcast.
    // Half an allgather's rounds and none of its fan-out of records: what the preflight uses.
    virtual Result<std::vector<Bytes>> gather(std::span<const std::uint8_t> mine) = 0;
    virtual Status barrier() = 0;
    // Best effort: tell the other ranks to give up with `reason`; never blocks past the deadline.
    virtual void abort(std::string_view reason) = 0;
};

// Everything a transport needs to know about this rank and its step.
struct RendezvousConfig {
    int rank = 0;
    int world_size = 1;
    int local_rank = 0;
    int local_world_size = 1;
    int node_rank = 0;
    std::string master_addr;  // host of rank 0 (TCP only)
    std::uint16_t master_port = 0;
    std::string secret;  // raw per-step secret bytes; empty only with allow_unauthenticated
    bool allow_unauthenticated = false;  // the user's explicit, unsafe opt-in
    std::string step_tag;  // "jobid.stepid" or similar: peers from another step are refused
    // Which rendezvous of the step this is when a step runs several (--ddp=check's, then the
    // program's): part of the node-local socket's name, so that a name seen in /proc/net/unix
    // during one is useless for squatting the next. Every rank of a node must agree.
    std::string round;
    std::string host;  // this rank's host name, for error messages
    std::chrono::milliseconds timeout{kDefaultRendezvousTimeout};
    // TCP: where each node's leader listens, by node rank (node 0 is rank 0's, at master_port),
    // and the fanout of the tree they form (rendezvous/protocol/leader_tree.hpp). Empty: every node
    // leader is a direct child of rank 0. Several "nodes" on one host (tests) differ by port.
    struct Endpoint {
        std::string host;
        std::uint16_t port = 0;
    };
    std::vector<Endpoint> leaders;
    int tree_fanout = contract::kTreeFanoutDefault;
};

}  // namespace sddp

// SPDX-License-Identifier: Apache-2.0
// Collectives on the rendezvous tree: contributions flow up to rank 0, results flow down.
//
//   broadcast from 0   down only                  (root -> leaders -> locals)
//   broadcast from r   up (only r's record moves), then down
//   allgather          up (records merge per node), then down (one shared encoded result)
//   gather             up only: rank 0 holds every record, nothing comes back
//   barrier            up (empty), then down (empty)
//
// Every message carries the collective's sequence number and kind, so ranks that called
// different collectives fail with a clear mismatch instead of exchanging the wrong bytes. They
// run over TreeLinks only (tree_links.hpp): the join that built the tree is not theirs to see.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/base/bytes.hpp"
#include "core/base/result.hpp"
#include "rendezvous/protocol/wire.hpp"
#include "rendezvous/tcp/tree_links.hpp"

namespace sddp::tcp {

class Collectives {
  public:
    Collectives(TreeLinks& tree, int rank, int world_size)
        : tree_(tree), rank_(rank), world_size_(world_size) {}

    Status broadcast(Bytes& bytes, int root);
    Result<std::vector<Bytes>> allgather(std::span<const std::uint8_t> mine);
    Result<std::vector<Bytes>> gather(std::span<const std::uint8_t> mine);
    Status barrier();

  private:
    using LinkId = TreeLinks::LinkId;

    Result<std::vector<Bytes>> run(wire::Op op, int root, std::span<const std::uint8_t> mine);
    Status gather_up(std::uint64_t seq, wire::Op op, int root,
                     std::vector<wire::RankRecord>& records, Clock::time_point deadline);
    Result<OwnedFrame> wait_down(LinkId parent, std::uint64_t seq, wire::Op op,
                                 Clock::time_point deadline);
    // The peer on `link` closed its end during collective `seq`: the rendezvous fails.
    Error lost(LinkId link, std::uint64_t seq, wire::Op op);
    Status check_match(LinkId link, std::uint64_t seq, wire::Op op, int root,
                       std::uint64_t their_seq, wire::Op their_op, int their_root);

    TreeLinks& tree_;
    int rank_;
    int world_size_;
    std::uint64_t seq_ = 0;
};

}  // namespace sddp::tcp

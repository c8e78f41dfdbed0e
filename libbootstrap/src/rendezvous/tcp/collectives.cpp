// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/tcp/collectives.hpp"

#include <algorithm>
#include <cstdint>

#include "rendezvous/tcp/message_text.hpp"

namespace sddp::tcp {

Status Collectives::broadcast(Bytes& bytes, int root) {
    if (root < 0 || root >= world_size_) {
        return make_error(Errc::invalid_input,
                          tree_.self() + ": broadcast root " + std::to_string(root) +
                              " is outside world size " + std::to_string(world_size_));
    }
    SDDP_TRY(items, run(wire::Op::broadcast, root, bytes));
    if (rank_ != root) bytes = std::move(items.front());
    return ok_status();
}

Result<std::vector<Bytes>> Collectives::allgather(std::span<const std::uint8_t> mine) {
    return run(wire::Op::allgather, 0, mine);
}

Result<std::vector<Bytes>> Collectives::gather(std::span<const std::uint8_t> mine) {
    return run(wire::Op::gather, 0, mine);
}

Status Collectives::barrier() {
    SDDP_TRY(items, run(wire::Op::barrier, 0, {}));
    (void)items;
    return ok_status();
}

Status Collectives::check_match(LinkId link, std::uint64_t seq, wire::Op op, int root,
                                std::uint64_t their_seq, wire::Op their_op, int their_root) {
    if (seq == their_seq && op == their_op && root == their_root) return ok_status();
    auto what = [](wire::Op o, std::uint64_t s, int r) {
        std::string t = std::string(wire::op_name(o)) + " #" + std::to_string(s);
        if (o == wire::Op::broadcast) t += " from rank " + std::to_string(r);
        return t;
    };
    return tree_.fail(
        make_error(Errc::protocol, tree_.self() + ": collective mismatch: this rank is in " +
                                       what(op, seq, root) + " but " + tree_.describe(link) +
                                       " is in " + what(their_op, their_seq, their_root) +
                                       "; every rank must call the same collectives in "
                                       "the same order"),
        link);
}

Status Collectives::gather_up(std::uint64_t seq, wire::Op op, int root,
                              std::vector<wire::RankRecord>& records, Clock::time_point deadline) {
    const auto start = Clock::now();
    const std::vector<LinkId> children = tree_.children();
    std::vector<char> got(children.size(), 0);
    std::size_t remaining = children.size();
    auto take = [&](std::size_t i) -> Status {
        const LinkId c = children[i];
        std::optional<OwnedFrame> f = tree_.receive(c);
        if (!f) {
            return tree_.closed(c) ? lost(c, seq, op) : ok_status();
        }
        Result<wire::Up> up =
            wire::decode_up(f->payload(), static_cast<std::uint32_t>(world_size_));
        if (!up.ok()) {
            return tree_.fail(make_error(Errc::protocol, tree_.self() + ": " + tree_.describe(c) +
                                                             ": " + up.error().message),
                              c);
        }
        SDDP_CHECK(check_match(c, seq, op, root, up->seq, up->op, up->root));
        for (wire::RankRecord& r : up->records) records.push_back(std::move(r));
        got[i] = 1;
        --remaining;
        return ok_status();
    };
    for (std::size_t i = 0; i < children.size(); ++i) SDDP_CHECK(take(i));
    while (remaining > 0) {
        if (tree_.failure()) return *tree_.failure();
        if (Clock::now() >= deadline) {
            std::vector<int> missing;
            std::string hosts;
            int listed = 0;
            for (std::size_t i = 0; i < children.size(); ++i) {
                if (got[i]) continue;
                const std::vector<int> behind = tree_.ranks_behind(children[i]);
                missing.insert(missing.end(), behind.begin(), behind.end());
                if (listed++ < 8) {
                    hosts += (hosts.empty() ? "" : ", ") + tree_.describe(children[i]);
                }
            }
            return tree_.fail(make_error(
                Errc::timeout,
                tree_.self() + ": timed out after " + seconds_text(Clock::now() - start) + " in " +
                    std::string(wire::op_name(op)) + " #" + std::to_string(seq) +
                    " waiting for ranks " + format_rank_list(missing) + " [" + hosts +
                    (listed > 8 ? ", ..." : "") + "]; they are stuck before this call or hung"));
        }
        const std::vector<LinkId>& touched = tree_.turn(deadline);
        if (tree_.failure()) return *tree_.failure();
        for (const LinkId id : touched) {
            for (std::size_t i = 0; i < children.size(); ++i) {
                if (children[i] == id && !got[i]) SDDP_CHECK(take(i));
            }
        }
    }
    return ok_status();
}

Error Collectives::lost(LinkId link, std::uint64_t seq, wire::Op op) {
    return tree_.fail(
        make_error(Errc::peer_lost, tree_.self() + ": lost connection to " + tree_.describe(link) +
                                        " during " + std::string(wire::op_name(op)) + " #" +
                                        std::to_string(seq) +
                                        "; it exited or was killed, see its log"),
        link);
}

Result<OwnedFrame> Collectives::wait_down(LinkId parent, std::uint64_t seq, wire::Op op,
                                          Clock::time_point deadline) {
    const auto start = Clock::now();
    for (;;) {
        if (tree_.failure()) return *tree_.failure();
        if (std::optional<OwnedFrame> f = tree_.receive(parent)) return std::move(*f);
        if (tree_.closed(parent)) return lost(parent, seq, op);
        if (Clock::now() >= deadline) {
            return tree_.fail(make_error(
                Errc::timeout, tree_.self() + ": timed out after " +
                                   seconds_text(Clock::now() - start) + " in " +
                                   std::string(wire::op_name(op)) + " #" + std::to_string(seq) +
                                   " waiting for the result from " + tree_.describe(parent)));
        }
        tree_.turn(deadline);
    }
}

Result<std::vector<Bytes>> Collectives::run(wire::Op op, int root,
                                            std::span<const std::uint8_t> mine) {
    if (tree_.failure()) return *tree_.failure();
    const std::uint64_t seq = ++seq_;
    const auto deadline = tree_.deadline_from(Clock::now());
    const std::string during = std::string(wire::op_name(op)) + " #" + std::to_string(seq);
    if (mine.size() > wire::kMaxRecordSize) {
        return tree_.fail(
            make_error(Errc::too_large, tree_.self() + ": " + during + " record of " +
                                            std::to_string(mine.size()) + " bytes exceeds the " +
                                            std::to_string(wire::kMaxRecordSize) + "-byte limit"));
    }
    // Broadcast from rank 0 needs no upward round; everything else gathers first.
    const bool up_phase = !(op == wire::Op::broadcast && root == 0);
    std::vector<wire::RankRecord> records;
    if (up_phase) {
        if (op == wire::Op::allgather || op == wire::Op::gather ||
            (op == wire::Op::broadcast && rank_ == root)) {
            records.push_back(wire::RankRecord{rank_, Bytes(mine.begin(), mine.end())});
        }
        SDDP_CHECK(gather_up(seq, op, root, records, deadline));
        if (const std::optional<LinkId> parent = tree_.parent()) {
            wire::Up up{seq, op, root, std::move(records)};
            Result<Bytes> frame = wire::encode_up(up);
            if (!frame.ok()) return tree_.fail(frame.take_error());
            tree_.send(*parent, std::make_shared<const Bytes>(std::move(*frame)));
            records.clear();
        }
    }
    std::vector<Bytes> items;
    if (rank_ == 0) {
        if (op == wire::Op::broadcast) {
            if (root == 0) {
                items.emplace_back(mine.begin(), mine.end());
            } else {
                const auto it = std::find_if(records.begin(), records.end(),
                                             [&](const auto& r) { return r.rank == root; });
                if (it == records.end()) {
                    return tree_.fail(
                        make_error(Errc::protocol, tree_.self() + ": " + during + " from rank " +
                                                       std::to_string(root) +
                                                       ": the root's bytes never arrived"));
                }
                items.push_back(std::move(it->data));
            }
        } else if (op == wire::Op::allgather || op == wire::Op::gather) {
            items.resize(static_cast<std::size_t>(world_size_));
            std::vector<char> seen(items.size(), 0);
            for (wire::RankRecord& r : records) {
                if (r.rank < 0 || r.rank >= world_size_ || seen[static_cast<std::size_t>(r.rank)]) {
                    return tree_.fail(make_error(
                        Errc::protocol, tree_.self() + ": " + during + ": record for rank " +
                                            std::to_string(r.rank) +
                                            " is out of range or duplicated"));
                }
                seen[static_cast<std::size_t>(r.rank)] = 1;
                items[static_cast<std::size_t>(r.rank)] = std::move(r.data);
            }
            if (records.size() != items.size()) {
                return tree_.fail(
                    make_error(Errc::protocol, tree_.self() + ": " + during + ": got " +
                                                   std::to_string(records.size()) + " of " +
                                                   std::to_string(items.size()) + " records"));
            }
        }
        const std::vector<LinkId> children = tree_.children();
        if (!children.empty() && op != wire::Op::gather) {
            Result<Bytes> frame = wire::encode_down(wire::Down{seq, op, root, items});
            if (!frame.ok()) return tree_.fail(frame.take_error());
            // One encoded result, shared by every child's send queue.
            const auto shared = std::make_shared<const Bytes>(std::move(*frame));
            for (const LinkId c : children) tree_.send(c, shared);
        }
    } else if (op != wire::Op::gather) {
        const LinkId parent = *tree_.parent();
        SDDP_TRY(frame, wait_down(parent, seq, op, deadline));
        Result<wire::Down> down =
            wire::decode_down(frame.payload(), static_cast<std::uint32_t>(world_size_));
        if (!down.ok()) {
            return tree_.fail(
                make_error(Errc::protocol, tree_.self() + ": " + tree_.describe(parent) + ": " +
                                               down.error().message),
                parent);
        }
        SDDP_CHECK(check_match(parent, seq, op, root, down->seq, down->op, down->root));
        const std::size_t want = op == wire::Op::allgather   ? static_cast<std::size_t>(world_size_)
                                 : op == wire::Op::broadcast ? 1
                                                             : 0;
        if (down->items.size() != want) {
            return tree_.fail(
                make_error(Errc::protocol, tree_.self() + ": " + during + ": expected " +
                                               std::to_string(want) + " items, got " +
                                               std::to_string(down->items.size())),
                parent);
        }
        // Forward the frame as received: no re-encoding on the node leaders.
        for (const LinkId c : tree_.children()) tree_.send(c, frame.raw);
        items = std::move(down->items);
    }
    SDDP_CHECK(tree_.drain(deadline, during));
    return items;
}

}  // namespace sddp::tcp

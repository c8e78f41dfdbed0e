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
// different collectives fail with a clear mismatch instead of exchanging the wrong bytes.
#include <algorithm>
#include <cstdint>

#include "rendezvous/tcp/message_text.hpp"
#include "rendezvous/tcp/node.hpp"

namespace sddp::tcp {

Status Node::broadcast(Bytes& bytes, int root) {
    if (root < 0 || root >= cfg_.world_size) {
        return make_error(Errc::invalid_input, self_ + ": broadcast root " + std::to_string(root) +
                                                   " is outside world size " +
                                                   std::to_string(cfg_.world_size));
    }
    SDDP_TRY(items, collective(wire::Op::broadcast, root, bytes));
    if (cfg_.rank != root) bytes = std::move(items.front());
    return ok_status();
}

Result<std::vector<Bytes>> Node::allgather(std::span<const std::uint8_t> mine) {
    return collective(wire::Op::allgather, 0, mine);
}

Result<std::vector<Bytes>> Node::gather(std::span<const std::uint8_t> mine) {
    return collective(wire::Op::gather, 0, mine);
}

Status Node::barrier() {
    SDDP_TRY(items, collective(wire::Op::barrier, 0, {}));
    (void)items;
    return ok_status();
}

void Node::abort(std::string_view reason) {
    if (failed_) return;
    fail(make_error(Errc::peer_lost, self_ + " aborted the rendezvous: " + std::string(reason)));
}

Status Node::check_match(const Link& link, std::uint64_t seq, wire::Op op, int root,
                         std::uint64_t their_seq, wire::Op their_op, int their_root) {
    if (seq == their_seq && op == their_op && root == their_root) return ok_status();
    auto what = [](wire::Op o, std::uint64_t s, int r) {
        std::string t = std::string(wire::op_name(o)) + " #" + std::to_string(s);
        if (o == wire::Op::broadcast) t += " from rank " + std::to_string(r);
        return t;
    };
    return fail(make_error(Errc::protocol, self_ + ": collective mismatch: this rank is in " +
                                               what(op, seq, root) + " but " + describe(link) +
                                               " is in " + what(their_op, their_seq, their_root) +
                                               "; every rank must call the same collectives in "
                                               "the same order"),
                &link);
}

Status Node::gather_up(std::uint64_t seq, wire::Op op, int root,
                       std::vector<wire::RankRecord>& records, Clock::time_point deadline) {
    const auto start = Clock::now();
    std::vector<char> got(children_.size(), 0);
    std::size_t remaining = children_.size();
    auto take = [&](std::size_t i) -> Status {
        Link& c = *children_[i];
        if (c.inbox.empty()) {
            if (c.conn.eof()) {
                return fail(
                    make_error(Errc::peer_lost, self_ + ": lost connection to " + describe(c) +
                                                    " during " + std::string(wire::op_name(op)) +
                                                    " #" + std::to_string(seq) +
                                                    "; it exited or was killed, see its log"),
                    &c);
            }
            return ok_status();
        }
        const OwnedFrame f = std::move(c.inbox.front());
        c.inbox.pop_front();
        Result<wire::Up> up =
            wire::decode_up(f.payload(), static_cast<std::uint32_t>(cfg_.world_size));
        if (!up.ok()) {
            return fail(
                make_error(Errc::protocol, self_ + ": " + describe(c) + ": " + up.error().message),
                &c);
        }
        SDDP_CHECK(check_match(c, seq, op, root, up->seq, up->op, up->root));
        for (wire::RankRecord& r : up->records) records.push_back(std::move(r));
        got[i] = 1;
        --remaining;
        return ok_status();
    };
    for (std::size_t i = 0; i < children_.size(); ++i) SDDP_CHECK(take(i));
    while (remaining > 0) {
        if (failed_) return *failed_;
        if (Clock::now() >= deadline) {
            std::vector<int> missing;
            std::string hosts;
            int listed = 0;
            for (std::size_t i = 0; i < children_.size(); ++i) {
                if (got[i]) continue;
                const std::vector<int> behind = ranks_behind(*children_[i]);
                missing.insert(missing.end(), behind.begin(), behind.end());
                if (listed++ < 8) {
                    hosts += (hosts.empty() ? "" : ", ") + describe(*children_[i]);
                }
            }
            return fail(make_error(
                Errc::timeout,
                self_ + ": timed out after " + seconds_text(Clock::now() - start) + " in " +
                    std::string(wire::op_name(op)) + " #" + std::to_string(seq) +
                    " waiting for ranks " + format_rank_list(missing) + " [" + hosts +
                    (listed > 8 ? ", ..." : "") + "]; they are stuck before this call or hung"));
        }
        pump(deadline);
        if (failed_) return *failed_;
        for (const std::uint64_t id : touched_) {
            for (std::size_t i = 0; i < children_.size(); ++i) {
                if (children_[i]->id == id && !got[i]) SDDP_CHECK(take(i));
            }
        }
    }
    return ok_status();
}

Result<OwnedFrame> Node::wait_down(std::uint64_t seq, wire::Op op, Clock::time_point deadline) {
    const auto start = Clock::now();
    for (;;) {
        if (failed_) return *failed_;
        if (!parent_->inbox.empty()) {
            OwnedFrame f = std::move(parent_->inbox.front());
            parent_->inbox.pop_front();
            return f;
        }
        if (parent_->conn.eof()) {
            return fail(
                make_error(Errc::peer_lost, self_ + ": lost connection to " + describe(*parent_) +
                                                " during " + std::string(wire::op_name(op)) + " #" +
                                                std::to_string(seq) +
                                                "; it exited or was killed, see its log"),
                parent_);
        }
        if (Clock::now() >= deadline) {
            return fail(make_error(
                Errc::timeout, self_ + ": timed out after " + seconds_text(Clock::now() - start) +
                                   " in " + std::string(wire::op_name(op)) + " #" +
                                   std::to_string(seq) + " waiting for the result from " +
                                   describe(*parent_)));
        }
        pump(deadline);
    }
}

Result<std::vector<Bytes>> Node::collective(wire::Op op, int root,
                                            std::span<const std::uint8_t> mine) {
    if (failed_) return *failed_;
    const std::uint64_t seq = ++seq_;
    const auto deadline = deadline_from(Clock::now());
    const std::string during = std::string(wire::op_name(op)) + " #" + std::to_string(seq);
    if (mine.size() > wire::kMaxRecordSize) {
        return fail(
            make_error(Errc::too_large, self_ + ": " + during + " record of " +
                                            std::to_string(mine.size()) + " bytes exceeds the " +
                                            std::to_string(wire::kMaxRecordSize) + "-byte limit"));
    }
    // Broadcast from rank 0 needs no upward round; everything else gathers first.
    const bool up_phase = !(op == wire::Op::broadcast && root == 0);
    std::vector<wire::RankRecord> records;
    if (up_phase) {
        if (op == wire::Op::allgather || op == wire::Op::gather ||
            (op == wire::Op::broadcast && cfg_.rank == root)) {
            records.push_back(wire::RankRecord{cfg_.rank, Bytes(mine.begin(), mine.end())});
        }
        SDDP_CHECK(gather_up(seq, op, root, records, deadline));
        if (parent_ != nullptr) {
            wire::Up up{seq, op, root, std::move(records)};
            Result<Bytes> frame = wire::encode_up(up);
            if (!frame.ok()) return fail(frame.take_error());
            send_to(*parent_, std::make_shared<const Bytes>(std::move(*frame)));
            records.clear();
        }
    }
    std::vector<Bytes> items;
    if (is_root_) {
        if (op == wire::Op::broadcast) {
            if (root == 0) {
                items.emplace_back(mine.begin(), mine.end());
            } else {
                const auto it = std::find_if(records.begin(), records.end(),
                                             [&](const auto& r) { return r.rank == root; });
                if (it == records.end()) {
                    return fail(make_error(Errc::protocol, self_ + ": " + during + " from rank " +
                                                               std::to_string(root) +
                                                               ": the root's bytes never arrived"));
                }
                items.push_back(std::move(it->data));
            }
        } else if (op == wire::Op::allgather || op == wire::Op::gather) {
            items.resize(static_cast<std::size_t>(cfg_.world_size));
            std::vector<char> seen(items.size(), 0);
            for (wire::RankRecord& r : records) {
                if (r.rank < 0 || r.rank >= cfg_.world_size ||
                    seen[static_cast<std::size_t>(r.rank)]) {
                    return fail(make_error(Errc::protocol, self_ + ": " + during +
                                                               ": record for rank " +
                                                               std::to_string(r.rank) +
                                                               " is out of range or duplicated"));
                }
                seen[static_cast<std::size_t>(r.rank)] = 1;
                items[static_cast<std::size_t>(r.rank)] = std::move(r.data);
            }
            if (records.size() != items.size()) {
                return fail(make_error(Errc::protocol, self_ + ": " + during + ": got " +
                                                           std::to_string(records.size()) + " of " +
                                                           std::to_string(items.size()) +
                                                           " records"));
            }
        }
        if (!children_.empty() && op != wire::Op::gather) {
            Result<Bytes> frame = wire::encode_down(wire::Down{seq, op, root, items});
            if (!frame.ok()) return fail(frame.take_error());
            // One encoded result, shared by every child's send queue.
            const auto shared = std::make_shared<const Bytes>(std::move(*frame));
            for (Link* c : children_) send_to(*c, shared);
        }
    } else if (op != wire::Op::gather) {
        SDDP_TRY(frame, wait_down(seq, op, deadline));
        Result<wire::Down> down =
            wire::decode_down(frame.payload(), static_cast<std::uint32_t>(cfg_.world_size));
        if (!down.ok()) {
            return fail(make_error(Errc::protocol,
                                   self_ + ": " + describe(*parent_) + ": " + down.error().message),
                        parent_);
        }
        SDDP_CHECK(check_match(*parent_, seq, op, root, down->seq, down->op, down->root));
        const std::size_t want = op == wire::Op::allgather
                                     ? static_cast<std::size_t>(cfg_.world_size)
                                 : op == wire::Op::broadcast ? 1
                                                             : 0;
        if (down->items.size() != want) {
            return fail(make_error(Errc::protocol, self_ + ": " + during + ": expected " +
                                                       std::to_string(want) + " items, got " +
                                                       std::to_string(down->items.size())),
                        parent_);
        }
        // Forward the frame as received: no re-encoding on the node leaders.
        for (Link* c : children_) send_to(*c, frame.raw);
        items = std::move(down->items);
    }
    SDDP_CHECK(wait_for_output(deadline, during));
    return items;
}

}  // namespace sddp::tcp

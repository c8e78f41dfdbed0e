// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/protocol/wire.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/base/field_codec.hpp"

namespace sddp::wire {
namespace {

Error invalid(std::string what) {
    return make_error(Errc::protocol, std::move(what));
}

// A frame's header, its length left 0 until frame_finish writes it in, then the payload's fields.
FieldWriter frame_start(MsgType type, std::size_t payload_hint) {
    FieldWriter w(kHeaderSize + payload_hint);
    w.raw(kMagic);
    w.u8(kVersion);
    w.u8(static_cast<std::uint8_t>(type));
    w.u16(0);  // flags
    w.u32(0);  // length
    return w;
}

Bytes frame_finish(FieldWriter&& w) {
    Bytes out = std::move(w).take();
    const auto len = static_cast<std::uint32_t>(out.size() - kHeaderSize);
    for (std::size_t i = 0; i < 4; ++i) out[8 + i] = static_cast<std::uint8_t>(len >> (24 - 8 * i));
    return out;
}

// A count of items that each take at least `min_item` bytes: refused if the payload cannot hold
// that many, or if it is more than the step can have (`max_items`, its world size), so a forged
// count never drives an allocation. The payload check alone is not enough: a 256 MiB frame of
// 4-byte items would reserve 64 Mi vector entries (1.5 GiB).
std::uint32_t read_count(FieldReader& r, std::size_t min_item, std::uint32_t max_items,
                         const char* field) {
    const std::uint32_t n = r.u32(field);
    if (r.ok() && static_cast<std::uint64_t>(n) * min_item > r.remaining()) {
        r.fail(field, "claims more items than the message holds");
        return 0;
    }
    if (r.ok() && n > max_items) {
        r.fail(field, "claims " + std::to_string(n) + " items, more than the world size " +
                          std::to_string(max_items));
        return 0;
    }
    return n;
}

bool known_type(std::uint8_t t) {
    return t >= static_cast<std::uint8_t>(MsgType::challenge) &&
           t <= static_cast<std::uint8_t>(MsgType::down);
}

bool known_op(std::uint8_t op) {
    return op >= static_cast<std::uint8_t>(Op::broadcast) &&
           op <= static_cast<std::uint8_t>(Op::gather);
}

// Up and Down begin alike: the collective's sequence number, its operation and its root, then a
// u32 count. Both directions of both messages go through these, so the layouts cannot drift.
constexpr std::size_t kCollectivePrefixSize = 8 + 1 + 4 + 4;

template <typename M>
void write_collective_prefix(FieldWriter& w, const M& m, std::size_t count) {
    w.u64(m.seq);
    w.u8(static_cast<std::uint8_t>(m.op));
    w.i32(m.root);
    w.u32(static_cast<std::uint32_t>(count));
}

template <typename M>
std::uint32_t read_collective_prefix(FieldReader& r, M& m, std::size_t min_entry_size,
                                     std::uint32_t max_items, const char* count_name) {
    m.seq = r.u64("sequence");
    const std::uint8_t op = r.u8("op");
    m.root = r.i32("root");
    if (r.ok() && !known_op(op)) r.fail("op", "is unknown");
    m.op = static_cast<Op>(op);
    return read_count(r, min_entry_size, max_items, count_name);
}

Status check_record_size(std::size_t size) {
    if (size <= kMaxRecordSize) return ok_status();
    return make_error(Errc::too_large, "a rendezvous record of " + std::to_string(size) +
                                           " bytes exceeds the " + std::to_string(kMaxRecordSize) +
                                           "-byte limit");
}

}  // namespace

std::string printable(std::string_view s, std::size_t cap) {
    std::string out;
    out.reserve(std::min(s.size(), cap) + 8);
    for (const char ch : s) {
        if (out.size() >= cap) {
            out += "...";
            break;
        }
        const auto c = static_cast<unsigned char>(ch);
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            out += ch;
        } else {
            out += "\\x" + to_hex(std::string_view(&ch, 1));
        }
    }
    return out;
}

std::string_view op_name(Op op) {
    switch (op) {
        case Op::broadcast:
            return "broadcast";
        case Op::allgather:
            return "allgather";
        case Op::barrier:
            return "barrier";
        case Op::gather:
            return "gather";
    }
    return "unknown";
}

std::optional<std::uint32_t> declared_payload(std::span<const std::uint8_t> buf) {
    if (buf.size() < kHeaderSize) return std::nullopt;
    return FieldReader(buf.subspan(8, 4)).u32("length");
}

Result<std::optional<Frame>> decode_frame(std::span<const std::uint8_t> buf,
                                          std::uint32_t max_payload) {
    const std::size_t magic_seen = std::min(buf.size(), kMagic.size());
    if (!std::equal(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(magic_seen),
                    kMagic.begin())) {
        return invalid("not an sddp rendezvous message (bad magic)");
    }
    if (buf.size() > 4 && buf[4] != kVersion) {
        return invalid("peer speaks sddp rendezvous protocol v" + std::to_string(buf[4]) +
                       ", this library v" + std::to_string(kVersion) +
                       ": all ranks must use the same slurm-ddp version");
    }
    if (buf.size() > 5 && !known_type(buf[5])) {
        return invalid("unknown message type " + std::to_string(buf[5]));
    }
    if (buf.size() > 7 && (buf[6] != 0 || buf[7] != 0)) {
        return invalid("reserved header flags are set");
    }
    const std::optional<std::uint32_t> declared = declared_payload(buf);
    if (!declared) return std::optional<Frame>();
    const std::uint32_t len = *declared;
    if (len > max_payload) {
        return invalid("message of " + std::to_string(len) + " bytes exceeds the " +
                       std::to_string(max_payload) + "-byte limit");
    }
    if (buf.size() - kHeaderSize < len) return std::optional<Frame>();
    Frame f;
    f.type = static_cast<MsgType>(buf[5]);
    f.payload = buf.subspan(kHeaderSize, len);
    f.size = kHeaderSize + len;
    return std::optional<Frame>(f);
}

Bytes encode_challenge(const Challenge& m) {
    FieldWriter w = frame_start(MsgType::challenge, kNonceSize);
    w.raw(m.server_nonce);
    return frame_finish(std::move(w));
}

Bytes encode_hello(const Hello& m) {
    FieldWriter w = frame_start(MsgType::hello, 96 + m.step_tag.size() + m.host.size());
    w.i32(m.rank);
    w.i32(m.world_size);
    w.i32(m.local_rank);
    w.i32(m.local_world_size);
    w.i32(m.node_rank);
    w.str16(m.step_tag, kMaxTagSize);
    w.str16(m.host, kMaxHostSize);
    w.raw(m.client_nonce);
    w.raw(m.mac);
    return frame_finish(std::move(w));
}

Bytes encode_welcome(const Welcome& m) {
    FieldWriter w = frame_start(MsgType::welcome, 6 + m.host.size() + kMacSize);
    w.i32(m.rank);
    w.str16(m.host, kMaxHostSize);
    w.raw(m.mac);
    return frame_finish(std::move(w));
}

Bytes encode_reject(const Reject& m) {
    FieldWriter w = frame_start(MsgType::reject, m.reason.size() + 2 + kMacSize);
    w.str16(m.reason, kMaxReasonSize);
    w.raw(m.mac);
    return frame_finish(std::move(w));
}

Bytes encode_joined(const Joined& m) {
    FieldWriter w = frame_start(MsgType::joined, 4 + 4 * m.ranks.size());
    w.u32(static_cast<std::uint32_t>(m.ranks.size()));
    for (const std::int32_t r : m.ranks) w.i32(r);
    return frame_finish(std::move(w));
}

Bytes encode_abort(const Abort& m) {
    FieldWriter w = frame_start(MsgType::abort, 6 + m.reason.size() + kMacSize);
    w.u32(m.code);
    w.str16(m.reason, kMaxReasonSize);
    w.raw(m.mac);
    return frame_finish(std::move(w));
}

Result<Bytes> encode_up(const Up& m) {
    std::size_t size = kCollectivePrefixSize;
    for (const RankRecord& r : m.records) {
        SDDP_CHECK(check_record_size(r.data.size()));
        size += 8 + r.data.size();
    }
    if (size > kMaxFramePayload) {
        return make_error(Errc::too_large, "rendezvous message of " + std::to_string(size) +
                                               " bytes exceeds the " +
                                               std::to_string(kMaxFramePayload) + "-byte limit");
    }
    FieldWriter w = frame_start(MsgType::up, size);
    write_collective_prefix(w, m, m.records.size());
    for (const RankRecord& r : m.records) {
        w.i32(r.rank);
        w.blob32(r.data);
    }
    return frame_finish(std::move(w));
}

Result<Bytes> encode_down(const Down& m) {
    std::size_t size = kCollectivePrefixSize;
    for (const Bytes& b : m.items) {
        SDDP_CHECK(check_record_size(b.size()));
        size += 4 + b.size();
    }
    if (size > kMaxFramePayload) {
        return make_error(Errc::too_large,
                          "rendezvous result of " + std::to_string(size) + " bytes exceeds the " +
                              std::to_string(kMaxFramePayload) +
                              "-byte limit (world_size x record size is too large)");
    }
    FieldWriter w = frame_start(MsgType::down, size);
    write_collective_prefix(w, m, m.items.size());
    for (const Bytes& b : m.items) w.blob32(b);
    return frame_finish(std::move(w));
}

std::uint32_t max_frame_payload(int world_size) {
    const std::uint64_t world = static_cast<std::uint64_t>(std::max(world_size, 1));
    const std::uint64_t need = kCollectivePrefixSize + world * (8 + std::uint64_t{kMaxRecordSize});
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(need, kMaxFramePayload));
}

Result<Challenge> decode_challenge(std::span<const std::uint8_t> payload) {
    FieldReader r(payload, "challenge message");
    Challenge m;
    r.fixed(m.server_nonce, "server nonce");
    SDDP_CHECK(r.finish());
    return m;
}

Result<Hello> decode_hello(std::span<const std::uint8_t> payload) {
    FieldReader r(payload, "hello message");
    Hello m;
    m.rank = r.i32("rank");
    m.world_size = r.i32("world size");
    m.local_rank = r.i32("local rank");
    m.local_world_size = r.i32("local world size");
    m.node_rank = r.i32("node rank");
    m.step_tag = r.str16(kMaxTagSize, "step tag");
    m.host = r.str16(kMaxHostSize, "host");
    r.fixed(m.client_nonce, "client nonce");
    r.fixed(m.mac, "mac");
    SDDP_CHECK(r.finish());
    return m;
}

Result<Welcome> decode_welcome(std::span<const std::uint8_t> payload) {
    FieldReader r(payload, "welcome message");
    Welcome m;
    m.rank = r.i32("rank");
    m.host = r.str16(kMaxHostSize, "host");
    r.fixed(m.mac, "mac");
    SDDP_CHECK(r.finish());
    return m;
}

Result<Reject> decode_reject(std::span<const std::uint8_t> payload) {
    FieldReader r(payload, "reject message");
    Reject m;
    m.reason = r.str16(kMaxReasonSize, "reason");
    r.fixed(m.mac, "mac");
    SDDP_CHECK(r.finish());
    return m;
}

Result<Joined> decode_joined(std::span<const std::uint8_t> payload, std::uint32_t max_items) {
    FieldReader r(payload, "joined message");
    Joined m;
    const std::uint32_t n = read_count(r, 4, max_items, "rank count");
    m.ranks.reserve(n);
    for (std::uint32_t i = 0; i < n && r.ok(); ++i) m.ranks.push_back(r.i32("rank"));
    SDDP_CHECK(r.finish());
    return m;
}

Result<Abort> decode_abort(std::span<const std::uint8_t> payload) {
    FieldReader r(payload, "abort message");
    Abort m;
    m.code = r.u32("error code");
    m.reason = r.str16(kMaxReasonSize, "reason");
    r.fixed(m.mac, "mac");
    SDDP_CHECK(r.finish());
    return m;
}

Result<Up> decode_up(std::span<const std::uint8_t> payload, std::uint32_t max_items) {
    FieldReader r(payload, "up message");
    Up m;
    const std::uint32_t n = read_collective_prefix(r, m, 8, max_items, "record count");
    m.records.reserve(n);
    for (std::uint32_t i = 0; i < n && r.ok(); ++i) {
        RankRecord rec;
        rec.rank = r.i32("record rank");
        rec.data = r.blob32(kMaxRecordSize, "record");
        m.records.push_back(std::move(rec));
    }
    SDDP_CHECK(r.finish());
    return m;
}

Result<Down> decode_down(std::span<const std::uint8_t> payload, std::uint32_t max_items) {
    FieldReader r(payload, "down message");
    Down m;
    const std::uint32_t n = read_collective_prefix(r, m, 4, max_items, "item count");
    m.items.reserve(n);
    for (std::uint32_t i = 0; i < n && r.ok(); ++i)
        m.items.push_back(r.blob32(kMaxRecordSize, "item"));
    SDDP_CHECK(r.finish());
    return m;
}

}  // namespace sddp::wire

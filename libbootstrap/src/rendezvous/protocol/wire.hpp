// SPDX-License-Identifier: Apache-2.0
// The rendezvous wire format: pure framing, encoding and decoding, no I/O.
//
// Every message is one frame: a 12-byte header followed by `length` payload bytes.
//
//   offset 0  magic   "SDDP"        rejects port scanners and stray protocols at byte 1
//          4  version 3             a peer from a different release is refused by name ("peer
//                                   speaks sddp rendezvous protocol v2, this library v3"), not
//                                   misread. Bump it with every change a peer of the previous
//                                   release would misread: 3 added the leaders' tree (joined
//                                   lists from child leaders, the empty "subtree joined") and
//                                   the host in the welcome's proof
//          5  type    MsgType
//          6  flags   0             reserved; non-zero is invalid so it can be used later
//          8  length  u32 BE        payload bytes; checked against a cap before anything waits
//                                   for or allocates the payload
//
// Integers are big-endian; strings and byte blobs carry a length prefix (core/base/field_codec,
// which also encodes the preflight and check records). Decoders take arbitrary bytes (they are
// fuzzed) and never read out of bounds, never trust a count before checking it against the bytes
// actually present, and never allocate more than the input size.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/bytes.hpp"
#include "core/base/result.hpp"

namespace sddp {

namespace wire {

inline constexpr std::array<std::uint8_t, 4> kMagic = {'S', 'D', 'D', 'P'};
inline constexpr std::uint8_t kVersion = 3;
inline constexpr std::size_t kHeaderSize = 12;
inline constexpr std::size_t kNonceSize = 32;
inline constexpr std::size_t kMacSize = 32;

// Before a peer has authenticated it may make us buffer at most this much.
inline constexpr std::uint32_t kMaxHandshakePayload = 4096;
// One rank's allgather record, and one broadcast payload.
inline constexpr std::uint32_t kMaxRecordSize = 1u << 20;
// Any frame from an authenticated peer (an allgather result holds world_size records).
inline constexpr std::uint32_t kMaxFramePayload = 256u << 20;
inline constexpr std::size_t kMaxTagSize = 256;
inline constexpr std::size_t kMaxHostSize = 256;
inline constexpr std::size_t kMaxReasonSize = 2048;

enum class MsgType : std::uint8_t {
    challenge = 1,  // server -> client: server nonce
    hello = 2,      // client -> server: identity, client nonce, proof of the secret
    welcome = 3,    // server -> client: the server's proof of the secret
    reject = 4,     // server -> client: why the connection is refused
    joined = 5,     // node leader -> parent: ranks that joined it (tree: an empty list says
                    // its whole subtree has joined)
    abort = 6,      // either way: give up, with an error code and reason
    up = 7,         // child -> parent: this subtree's contribution to a collective
    down = 8,       // parent -> child: the collective's result
};

// Text a peer sent, fit for a log line: bytes outside printable ASCII (and the backslash) become
// \xNN, and the result is cut near `cap` characters with "...". Anything from the wire that
// reaches stderr goes through this first, so a peer cannot forge log lines or terminal escapes.
std::string printable(std::string_view s, std::size_t cap);

enum class Op : std::uint8_t { broadcast = 1, allgather = 2, barrier = 3, gather = 4 };
std::string_view op_name(Op op);

struct Frame {
    MsgType type{};
    std::span<const std::uint8_t> payload;
    std::size_t size = 0;  // header + payload: how many bytes to consume
};

// A complete frame at the front of `buf`; nullopt if more bytes are needed; an Errc::protocol
// error if the bytes can never become a valid frame (bad magic, version, type, or a length over
// `max_payload`). Garbage is recognised from its first byte, without waiting for a full header.
Result<std::optional<Frame>> decode_frame(std::span<const std::uint8_t> buf,
                                          std::uint32_t max_payload);

// The payload length the header at the front of `buf` declares; nullopt until the header is
// whole. Unchecked: decode_frame checks it against its cap, this only sizes a receive.
std::optional<std::uint32_t> declared_payload(std::span<const std::uint8_t> buf);

using Nonce = std::array<std::uint8_t, kNonceSize>;
using Mac = std::array<std::uint8_t, kMacSize>;

struct Challenge {
    Nonce server_nonce{};
};

struct Hello {
    std::int32_t rank = 0;
    std::int32_t world_size = 0;
    std::int32_t local_rank = 0;
    std::int32_t local_world_size = 0;
    std::int32_t node_rank = 0;
    std::string step_tag;
    std::string host;
    Nonce client_nonce{};
    Mac mac{};
};

struct Welcome {
    std::int32_t rank = 0;  // the server's rank, so a client can name its parent in errors
    std::string host;
    Mac mac{};
};

struct Reject {
    std::string reason;
    // Proof that the refusing server holds the secret (tcp/auth.hpp): a client acts on a
    // reject only when it verifies, so a squatter on the port cannot end a rank's join.
    Mac mac{};
};

struct Joined {
    std::vector<std::int32_t> ranks;
};

struct Abort {
    std::uint32_t code = 0;  // an sddp::Errc value
    std::string reason;
    // Unused (zero) since protocol 3: an abort is trusted only after the handshake, where the
    // session MAC covers it.
    Mac mac{};
};

struct RankRecord {
    std::int32_t rank = 0;
    Bytes data;
};

struct Up {
    std::uint64_t seq = 0;
    Op op = Op::barrier;
    std::int32_t root = 0;
    std::vector<RankRecord> records;
};

struct Down {
    std::uint64_t seq = 0;
    Op op = Op::barrier;
    std::int32_t root = 0;
    std::vector<Bytes> items;  // broadcast: one; allgather: world_size, by rank; barrier: none
                               // (a gather has no Down)
};

// Encoders return a whole frame. Strings longer than their cap are truncated (they are names
// and reasons, for humans); the two that carry user data refuse to exceed a cap instead.
Bytes encode_challenge(const Challenge& m);
Bytes encode_hello(const Hello& m);
Bytes encode_welcome(const Welcome& m);
Bytes encode_reject(const Reject& m);
Bytes encode_joined(const Joined& m);
Bytes encode_abort(const Abort& m);
Result<Bytes> encode_up(const Up& m);
Result<Bytes> encode_down(const Down& m);

// Payload decoders: the payload is complete, so a short one is invalid (Errc::protocol). Those
// with a list take `max_items`, the step's world size: no list can be longer, and a count over
// it is refused before anything is reserved for it.
Result<Challenge> decode_challenge(std::span<const std::uint8_t> payload);
Result<Hello> decode_hello(std::span<const std::uint8_t> payload);
Result<Welcome> decode_welcome(std::span<const std::uint8_t> payload);
Result<Reject> decode_reject(std::span<const std::uint8_t> payload);
Result<Joined> decode_joined(std::span<const std::uint8_t> payload, std::uint32_t max_items);
Result<Abort> decode_abort(std::span<const std::uint8_t> payload);
Result<Up> decode_up(std::span<const std::uint8_t> payload, std::uint32_t max_items);
Result<Down> decode_down(std::span<const std::uint8_t> payload, std::uint32_t max_items);

// The largest frame an authenticated peer of a `world_size`-rank step can need: an allgather
// result of world_size full records (never more than kMaxFramePayload).
std::uint32_t max_frame_payload(int world_size);

}  // namespace wire
}  // namespace sddp

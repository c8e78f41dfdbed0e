// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the rendezvous wire format: arbitrary bytes must never crash, read out
// of bounds, or allocate beyond the input; whatever decodes must re-encode to the same payload.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "rendezvous/protocol/wire.hpp"

namespace {

using namespace sddp;
using namespace sddp::wire;

// The world size the list decoders are given: enough for inputs of the fuzzer's usual sizes to
// decode, small enough that the "more than the world size" refusal is reached too.
constexpr std::uint32_t kWorld = 256;

// Decoded messages re-encode to exactly the bytes they came from (the format has one spelling).
void check_round_trip(std::span<const std::uint8_t> payload, MsgType type) {
    Bytes again;
    switch (type) {
        case MsgType::challenge:
            if (auto m = decode_challenge(payload); m.ok()) again = encode_challenge(*m);
            break;
        case MsgType::hello:
            if (auto m = decode_hello(payload); m.ok()) again = encode_hello(*m);
            break;
        case MsgType::welcome:
            if (auto m = decode_welcome(payload); m.ok()) again = encode_welcome(*m);
            break;
        case MsgType::reject:
            if (auto m = decode_reject(payload); m.ok()) again = encode_reject(*m);
            break;
        case MsgType::joined:
            if (auto m = decode_joined(payload, kWorld); m.ok()) again = encode_joined(*m);
            break;
        case MsgType::abort:
            if (auto m = decode_abort(payload); m.ok()) again = encode_abort(*m);
            break;
        case MsgType::up:
            if (auto m = decode_up(payload, kWorld); m.ok()) {
                if (auto e = encode_up(*m); e.ok()) again = std::move(*e);
            }
            break;
        case MsgType::down:
            if (auto m = decode_down(payload, kWorld); m.ok()) {
                if (auto e = encode_down(*m); e.ok()) again = std::move(*e);
            }
            break;
    }
    if (again.empty()) return;
    const auto p = std::span<const std::uint8_t>(again).subspan(kHeaderSize);
    if (p.size() != payload.size() || !std::equal(p.begin(), p.end(), payload.begin()))
        std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::span<const std::uint8_t> in(data, size);
    // As a stream of frames, under both caps the transport uses.
    for (const std::uint32_t cap : {kMaxHandshakePayload, kMaxFramePayload}) {
        std::span<const std::uint8_t> rest = in;
        while (!rest.empty()) {
            Result<std::optional<Frame>> f = decode_frame(rest, cap);
            if (!f.ok() || !*f) break;
            if ((*f)->size > rest.size() || (*f)->payload.size() > cap) std::abort();
            check_round_trip((*f)->payload, (*f)->type);
            rest = rest.subspan((*f)->size);
        }
    }
    // As a bare payload of every type.
    for (std::uint8_t t = 1; t <= 8; ++t) check_round_trip(in, static_cast<MsgType>(t));
    return 0;
}

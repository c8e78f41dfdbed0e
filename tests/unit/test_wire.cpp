// SPDX-License-Identifier: Apache-2.0
// Wire format: round trips, "need more bytes" versus "invalid", and every malformed shape.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "rendezvous/protocol/wire.hpp"
#include "rendezvous/tcp/message_text.hpp"

namespace sddp::wire {
namespace {

// The world size the decoders are given: more than any list in these tests holds.
constexpr std::uint32_t kWorld = 64;

std::span<const std::uint8_t> payload_of(const Bytes& frame) {
    return std::span<const std::uint8_t>(frame).subspan(kHeaderSize);
}

Frame decode_whole(const Bytes& frame) {
    Result<std::optional<Frame>> f = decode_frame(frame, kMaxFramePayload);
    EXPECT_TRUE(f.ok());
    EXPECT_TRUE(f.ok() && f->has_value());
    EXPECT_EQ((*f)->size, frame.size());
    return **f;
}

Hello sample_hello() {
    Hello h;
    h.rank = 7;
    h.world_size = 256;
    h.local_rank = 3;
    h.local_world_size = 8;
    h.node_rank = -1;
    h.step_tag = "1234.0";
    h.host = "gpu-node-017";
    for (std::size_t i = 0; i < kNonceSize; ++i) h.client_nonce[i] = static_cast<std::uint8_t>(i);
    for (std::size_t i = 0; i < kMacSize; ++i) h.mac[i] = static_cast<std::uint8_t>(255 - i);
    return h;
}

TEST(WireFrame, HeaderLayout) {
    const Bytes f = encode_reject(Reject{"no", {}});
    ASSERT_EQ(f.size(), kHeaderSize + 4 + kMacSize);
    EXPECT_EQ(std::string(f.begin(), f.begin() + 4), "SDDP");
    EXPECT_EQ(f[4], kVersion);
    EXPECT_EQ(f[5], static_cast<std::uint8_t>(MsgType::reject));
    EXPECT_EQ(f[6], 0);
    EXPECT_EQ(f[7], 0);
    EXPECT_EQ(f[11], 4 + kMacSize);  // big-endian length
}

TEST(WireFrame, EveryPrefixNeedsMoreBytes) {
    const Bytes f = encode_hello(sample_hello());
    for (std::size_t n = 0; n < f.size(); ++n) {
        Result<std::optional<Frame>> r =
            decode_frame(std::span<const std::uint8_t>(f.data(), n), kMaxHandshakePayload);
        ASSERT_TRUE(r.ok()) << n;
        EXPECT_FALSE(r->has_value()) << n;
    }
}

TEST(WireFrame, TwoFramesBackToBack) {
    Bytes two = encode_challenge(Challenge{});
    const Bytes second = encode_reject(Reject{"x"});
    two.insert(two.end(), second.begin(), second.end());
    Result<std::optional<Frame>> f = decode_frame(two, kMaxFramePayload);
    ASSERT_TRUE(f.ok() && f->has_value());
    EXPECT_EQ((*f)->type, MsgType::challenge);
    EXPECT_EQ((*f)->size, kHeaderSize + kNonceSize);
}

TEST(WireFrame, GarbageIsRejectedFromTheFirstByte) {
    const std::uint8_t g[] = {'G'};
    Result<std::optional<Frame>> r = decode_frame(g, kMaxFramePayload);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, Errc::protocol);
    EXPECT_NE(r.error().message.find("bad magic"), std::string::npos);
    const std::uint8_t partial[] = {'S', 'D', 'X'};
    EXPECT_FALSE(decode_frame(partial, kMaxFramePayload).ok());
}

TEST(WireText, PrintableEscapesAndCaps) {
    EXPECT_EQ(printable("n1-gpu.0", 64), "n1-gpu.0");
    EXPECT_EQ(printable(std::string("a\nb\x1b[2J\\\xff", 9), 64), "a\\x0ab\\x1b[2J\\x5c\\xff");
    EXPECT_EQ(printable(std::string(100, 'x'), 10), std::string(10, 'x') + "...");
}

TEST(WireFrame, RejectAndAbortCarryTheirProof) {
    Reject r{"why", {}};
    for (std::size_t i = 0; i < kMacSize; ++i) r.mac[i] = static_cast<std::uint8_t>(i * 7);
    const Bytes rf = encode_reject(r);
    Result<Reject> rd = decode_reject(std::span<const std::uint8_t>(rf).subspan(kHeaderSize));
    ASSERT_TRUE(rd.ok());
    EXPECT_EQ(rd->reason, "why");
    EXPECT_EQ(rd->mac, r.mac);
    Abort a{5, "gone", r.mac};
    const Bytes af = encode_abort(a);
    Result<Abort> ad = decode_abort(std::span<const std::uint8_t>(af).subspan(kHeaderSize));
    ASSERT_TRUE(ad.ok());
    EXPECT_EQ(ad->mac, r.mac);
    // A reject without its proof (the previous release's layout) is refused.
    EXPECT_FALSE(decode_reject(std::span<const std::uint8_t>(rf).subspan(kHeaderSize, 5)).ok());
}

TEST(WireFrame, BadVersionTypeFlags) {
    Bytes f = encode_reject(Reject{"x"});
    Bytes v = f;
    v[4] = 2;  // the previous release's protocol (before the leaders' tree)
    Result<std::optional<Frame>> rv = decode_frame(v, kMaxFramePayload);
    ASSERT_FALSE(rv.ok());
    EXPECT_NE(rv.error().message.find("peer speaks sddp rendezvous protocol v2, this library v3: "
                                      "all ranks must use the same slurm-ddp version"),
              std::string::npos)
        << rv.error().message;
    for (std::uint8_t t : {0, 9, 255}) {
        Bytes b = f;
        b[5] = t;
        EXPECT_FALSE(decode_frame(b, kMaxFramePayload).ok()) << int(t);
    }
    Bytes fl = f;
    fl[7] = 1;
    EXPECT_FALSE(decode_frame(fl, kMaxFramePayload).ok());
}

TEST(WireFrame, HugeLengthIsInvalidNotAWait) {
    // Only the header is present: the verdict must come without waiting for 4 GiB.
    Bytes h = {'S', 'D', 'D',  'P',  kVersion, static_cast<std::uint8_t>(MsgType::up),
               0,   0,   0xff, 0xff, 0xff,     0xff};
    Result<std::optional<Frame>> r = decode_frame(h, kMaxFramePayload);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, Errc::protocol);
    EXPECT_NE(r.error().message.find("exceeds"), std::string::npos);
    h[8] = 0;
    h[9] = 0;
    h[10] = 0x10;
    h[11] = 0x01;  // 4097: just over the handshake cap
    EXPECT_FALSE(decode_frame(h, kMaxHandshakePayload).ok());
    EXPECT_TRUE(decode_frame(h, kMaxFramePayload).ok());
}

TEST(WireMessages, RoundTrips) {
    Challenge c;
    c.server_nonce[5] = 42;
    const Bytes cf = encode_challenge(c);
    EXPECT_EQ(decode_challenge(payload_of(cf))->server_nonce, c.server_nonce);

    const Hello h = sample_hello();
    const Bytes hf = encode_hello(h);
    EXPECT_EQ(decode_whole(hf).type, MsgType::hello);
    Result<Hello> h2 = decode_hello(payload_of(hf));
    ASSERT_TRUE(h2.ok()) << h2.error().message;
    EXPECT_EQ(h2->rank, 7);
    EXPECT_EQ(h2->world_size, 256);
    EXPECT_EQ(h2->local_rank, 3);
    EXPECT_EQ(h2->local_world_size, 8);
    EXPECT_EQ(h2->node_rank, -1);
    EXPECT_EQ(h2->step_tag, "1234.0");
    EXPECT_EQ(h2->host, "gpu-node-017");
    EXPECT_EQ(h2->client_nonce, h.client_nonce);
    EXPECT_EQ(h2->mac, h.mac);

    Welcome w;
    w.rank = 4;
    w.host = "leader";
    w.mac[0] = 9;
    Result<Welcome> w2 = decode_welcome(payload_of(encode_welcome(w)));
    ASSERT_TRUE(w2.ok());
    EXPECT_EQ(w2->rank, 4);
    EXPECT_EQ(w2->host, "leader");
    EXPECT_EQ(w2->mac, w.mac);

    EXPECT_EQ(decode_reject(payload_of(encode_reject(Reject{"go away"})))->reason, "go away");
    EXPECT_EQ(decode_joined(payload_of(encode_joined(Joined{{1, 5, 9}})), kWorld)->ranks,
              (std::vector<std::int32_t>{1, 5, 9}));
    Result<Abort> a = decode_abort(payload_of(encode_abort(Abort{8, "rank 3 died"})));
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(a->code, 8u);
    EXPECT_EQ(a->reason, "rank 3 died");

    Up up{99, Op::allgather, 0, {{3, {1, 2, 3}}, {4, {}}}};
    Result<Bytes> uf = encode_up(up);
    ASSERT_TRUE(uf.ok());
    Result<Up> u2 = decode_up(payload_of(*uf), kWorld);
    ASSERT_TRUE(u2.ok());
    EXPECT_EQ(u2->seq, 99u);
    EXPECT_EQ(u2->op, Op::allgather);
    ASSERT_EQ(u2->records.size(), 2u);
    EXPECT_EQ(u2->records[0].rank, 3);
    EXPECT_EQ(u2->records[0].data, (Bytes{1, 2, 3}));
    EXPECT_TRUE(u2->records[1].data.empty());

    Down d{5, Op::broadcast, 2, {Bytes(300, 7)}};
    Result<Bytes> df = encode_down(d);
    ASSERT_TRUE(df.ok());
    Result<Down> d2 = decode_down(payload_of(*df), kWorld);
    ASSERT_TRUE(d2.ok());
    EXPECT_EQ(d2->root, 2);
    EXPECT_EQ(d2->items, d.items);

    Result<Bytes> bf = encode_down(Down{6, Op::barrier, 0, {}});
    ASSERT_TRUE(bf.ok());
    EXPECT_TRUE(decode_down(payload_of(*bf), kWorld)->items.empty());
}

TEST(WireMessages, EveryTruncationIsInvalid) {
    std::vector<Bytes> frames = {encode_challenge(Challenge{}),
                                 encode_hello(sample_hello()),
                                 encode_welcome(Welcome{1, "h", {}}),
                                 encode_reject(Reject{"r"}),
                                 encode_joined(Joined{{1, 2}}),
                                 encode_abort(Abort{1, "x"}),
                                 *encode_up(Up{1, Op::allgather, 0, {{0, {1}}}}),
                                 *encode_down(Down{1, Op::allgather, 0, {{1}, {2}}})};
    for (const Bytes& f : frames) {
        const auto p = payload_of(f);
        const auto type = static_cast<MsgType>(f[5]);
        for (std::size_t n = 0; n < p.size(); ++n) {
            const auto cut = p.subspan(0, n);
            bool ok = true;
            switch (type) {
                case MsgType::challenge:
                    ok = decode_challenge(cut).ok();
                    break;
                case MsgType::hello:
                    ok = decode_hello(cut).ok();
                    break;
                case MsgType::welcome:
                    ok = decode_welcome(cut).ok();
                    break;
                case MsgType::reject:
                    ok = decode_reject(cut).ok();
                    break;
                case MsgType::joined:
                    ok = decode_joined(cut, kWorld).ok();
                    break;
                case MsgType::abort:
                    ok = decode_abort(cut).ok();
                    break;
                case MsgType::up:
                    ok = decode_up(cut, kWorld).ok();
                    break;
                case MsgType::down:
                    ok = decode_down(cut, kWorld).ok();
                    break;
            }
            EXPECT_FALSE(ok) << "type " << int(f[5]) << " cut at " << n;
        }
    }
}

TEST(WireMessages, TrailingBytesAreInvalid) {
    Bytes f = encode_reject(Reject{"r"});
    Bytes p(payload_of(f).begin(), payload_of(f).end());
    p.push_back(0);
    Result<Reject> r = decode_reject(p);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("trailing"), std::string::npos);
}

TEST(WireMessages, ForgedCountsDoNotAllocate) {
    // A joined message claiming 2^32-1 ranks in 4 bytes of payload.
    const Bytes p = {0xff, 0xff, 0xff, 0xff};
    Result<Joined> j = decode_joined(p, kWorld);
    ASSERT_FALSE(j.ok());
    EXPECT_NE(j.error().message.find("more items"), std::string::npos);
    // An up message whose record claims 1 GiB.
    Bytes up = {0, 0, 0, 0,    0, 0, 0, 1, static_cast<std::uint8_t>(Op::allgather),
                0, 0, 0, 0,    0, 0, 0, 1, 0,
                0, 0, 0, 0x40, 0, 0, 0};
    Result<Up> u = decode_up(up, kWorld);
    ASSERT_FALSE(u.ok());
    EXPECT_NE(u.error().message.find("limit"), std::string::npos);
}

TEST(WireMessages, CountsOverTheWorldSizeAreRefusedBeforeAnyReservation) {
    // 1000 empty items fit in the 4 KiB payload, but a 4-rank step never has more than 4: the
    // count is refused, not reserved (a 256 MiB frame of them would reserve 1.5 GiB).
    Down many{1, Op::allgather, 0, std::vector<Bytes>(1000)};
    Result<Bytes> df = encode_down(many);
    ASSERT_TRUE(df.ok());
    Result<Down> d = decode_down(payload_of(*df), 4);
    ASSERT_FALSE(d.ok());
    EXPECT_NE(d.error().message.find("claims 1000 items, more than the world size 4"),
              std::string::npos)
        << d.error().message;
    EXPECT_TRUE(decode_down(payload_of(*df), 1000).ok());
    Up ups{1, Op::gather, 0, std::vector<RankRecord>(5)};
    Result<Bytes> uf = encode_up(ups);
    ASSERT_TRUE(uf.ok());
    EXPECT_FALSE(decode_up(payload_of(*uf), 4).ok());
    EXPECT_TRUE(decode_up(payload_of(*uf), 5).ok());
    const Bytes jf = encode_joined(Joined{{1, 2, 3}});
    EXPECT_FALSE(decode_joined(payload_of(jf), 2).ok());
    // What an authenticated peer of a small step may send is bounded by the step too.
    EXPECT_EQ(max_frame_payload(2), 8 + 1 + 4 + 4 + 2 * (8 + kMaxRecordSize));
    EXPECT_EQ(max_frame_payload(1 << 20), kMaxFramePayload);
}

TEST(WireMessages, OversizedStringsAndUnknownOps) {
    // Reject reason longer than its cap.
    Bytes p = {0xff, 0xff};
    p.resize(2 + 0xffff, 'a');
    EXPECT_FALSE(decode_reject(p).ok());
    // Unknown op in a down message.
    Bytes d = *encode_down(Down{1, Op::barrier, 0, {}});
    d[kHeaderSize + 8] = 42;
    Result<Down> r = decode_down(payload_of(d), kWorld);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("op"), std::string::npos);
    // The first value past the last op is unknown too; gather (the last) is known.
    d[kHeaderSize + 8] = static_cast<std::uint8_t>(Op::gather) + 1;
    EXPECT_FALSE(decode_down(payload_of(d), kWorld).ok());
    Result<Up> g = decode_up(payload_of(*encode_up(Up{3, Op::gather, 0, {{1, {7}}}})), kWorld);
    ASSERT_TRUE(g.ok());
    EXPECT_EQ(g->op, Op::gather);
    EXPECT_EQ(op_name(Op::gather), "gather");
}

TEST(WireMessages, EncodersTruncateTextButRefuseOversizedData) {
    const std::string long_reason(kMaxReasonSize + 100, 'r');
    Result<Reject> r = decode_reject(payload_of(encode_reject(Reject{long_reason})));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->reason.size(), kMaxReasonSize);
    Result<Bytes> up = encode_up(Up{1, Op::allgather, 0, {{0, Bytes(kMaxRecordSize + 1)}}});
    ASSERT_FALSE(up.ok());
    EXPECT_EQ(up.error().code, Errc::too_large);
    Result<Bytes> down = encode_down(Down{1, Op::broadcast, 0, {Bytes(kMaxRecordSize + 1)}});
    ASSERT_FALSE(down.ok());
    EXPECT_EQ(down.error().code, Errc::too_large);
}

TEST(RankList, CompactRanges) {
    EXPECT_EQ(tcp::format_rank_list({}), "");
    EXPECT_EQ(tcp::format_rank_list({3}), "3");
    EXPECT_EQ(tcp::format_rank_list({9, 3, 7, 8}), "3,7-9");
    EXPECT_EQ(tcp::format_rank_list({1, 1, 2}), "1-2");
    EXPECT_EQ(tcp::format_rank_list({0, 2, 4, 6}, 2), "0,2,... (2 more)");
}

// What a receiver learns from a header before the payload is in: the declared length, and
// nothing until the header is whole.
TEST(Wire, DeclaredPayloadFromTheHeaderAlone) {
    const Bytes frame = encode_challenge(Challenge{});
    const std::span<const std::uint8_t> all(frame);
    EXPECT_FALSE(declared_payload(all.first(kHeaderSize - 1)).has_value());
    ASSERT_TRUE(declared_payload(all.first(kHeaderSize)).has_value());
    EXPECT_EQ(*declared_payload(all.first(kHeaderSize)), kNonceSize);
    EXPECT_EQ(*declared_payload(all), frame.size() - kHeaderSize);
}

}  // namespace
}  // namespace sddp::wire

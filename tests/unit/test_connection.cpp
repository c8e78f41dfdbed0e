// SPDX-License-Identifier: Apache-2.0
// Connection: frames cut from a byte stream that arrives in any pieces, large ones received into
// a buffer of their own size and handed on whole, sealed ones checked frame by frame; and Fifo,
// the queues a link keeps.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <random>
#include <string>
#include <vector>

#include "rendezvous/protocol/wire.hpp"
#include "rendezvous/tcp/connection.hpp"
#include "rendezvous/tcp/fifo.hpp"

using namespace sddp;
using namespace sddp::tcp;

namespace {

constexpr std::uint32_t kCap = 64u << 20;

std::pair<Connection, Connection> connected_pair() {
    int fds[2] = {-1, -1};
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds), 0);
    return {Connection(Fd(fds[0]), "a"), Connection(Fd(fds[1]), "b")};
}

// A down frame of `items` records of `size` bytes, record i filled with i's low byte.
Bytes down_frame(std::size_t items, std::size_t size) {
    wire::Down d{1, wire::Op::allgather, 0, {}};
    for (std::size_t i = 0; i < items; ++i)
        d.items.emplace_back(size, static_cast<std::uint8_t>(i));
    Result<Bytes> b = wire::encode_down(d);
    EXPECT_TRUE(b.ok());
    return b.ok() ? *b : Bytes();
}

// Reads until a whole frame is there (or 2 s pass); the error text if the bytes were refused.
Result<std::optional<OwnedFrame>> receive(Connection& c) {
    for (int i = 0; i < 2000; ++i) {
        Result<std::optional<OwnedFrame>> f = c.next_frame(kCap);
        if (!f.ok() || f->has_value() || c.eof()) return f;
        pollfd p{c.fd(), POLLIN, 0};
        (void)::poll(&p, 1, 1);
        c.read_available(wire::kHeaderSize + kCap);
    }
    return std::optional<OwnedFrame>();
}

void flush_all(Connection& c) {
    for (int i = 0; i < 2000 && c.want_write(); ++i) {
        c.flush();
        pollfd p{c.fd(), POLLOUT, 0};
        (void)::poll(&p, 1, 1);
    }
    ASSERT_FALSE(c.want_write());
}

}  // namespace

TEST(Connection, AFrameArrivingInPiecesIsCutWholeOnlyOnceComplete) {
    auto [tx, rx] = connected_pair();
    const Bytes frame = down_frame(300, 64);  // ~21 KB: received into a buffer of its size
    ASSERT_GT(frame.size(), 8192u);
    const Bytes small = down_frame(1, 16);
    Bytes stream = frame;
    stream.insert(stream.end(), small.begin(), small.end());
    std::size_t sent = 0;
    for (const std::size_t upto :
         {std::size_t{5}, std::size_t{700}, std::size_t{9000}, frame.size() - 1, stream.size()}) {
        ASSERT_EQ(::write(tx.fd(), stream.data() + sent, upto - sent),
                  static_cast<ssize_t>(upto - sent));
        sent = upto;
        rx.read_available(wire::kHeaderSize + kCap);
        Result<std::optional<OwnedFrame>> f = rx.next_frame(kCap);
        ASSERT_TRUE(f.ok()) << f.error().message;
        if (upto < frame.size()) {
            EXPECT_FALSE(f->has_value()) << "a frame cut at " << upto << " of " << frame.size();
            continue;
        }
        ASSERT_TRUE(f->has_value());
        EXPECT_EQ(*(*f)->raw, frame);
    }
    Result<std::optional<OwnedFrame>> last = receive(rx);
    ASSERT_TRUE(last.ok() && last->has_value());
    EXPECT_EQ(*(*last)->raw, small) << "the bytes after a large frame were lost";
}

// Frames of every size around the direct-receive threshold, cut at random points: each comes out
// whole, in order, with its bytes.
TEST(Connection, RandomFramesInRandomPiecesComeOutWhole) {
    std::mt19937 rng(20261128);
    for (int trial = 0; trial < 20; ++trial) {
        auto [tx, rx] = connected_pair();
        std::vector<Bytes> frames;
        Bytes stream;
        for (int f = 0; f < 6; ++f) {
            const std::size_t items = std::uniform_int_distribution<std::size_t>(0, 120)(rng);
            const std::size_t size = std::uniform_int_distribution<std::size_t>(1, 200)(rng);
            frames.push_back(down_frame(items, size));
            stream.insert(stream.end(), frames.back().begin(), frames.back().end());
        }
        std::vector<Bytes> got;
        std::size_t sent = 0;
        while (sent < stream.size() || got.size() < frames.size()) {
            const std::size_t piece = std::min(
                stream.size() - sent, std::uniform_int_distribution<std::size_t>(1, 9000)(rng));
            if (piece > 0) {
                ASSERT_EQ(::write(tx.fd(), stream.data() + sent, piece),
                          static_cast<ssize_t>(piece));
                sent += piece;
            }
            rx.read_available(wire::kHeaderSize + kCap);
            for (;;) {
                Result<std::optional<OwnedFrame>> f = rx.next_frame(kCap);
                ASSERT_TRUE(f.ok()) << f.error().message;
                if (!f->has_value()) break;
                got.push_back(*(*f)->raw);
            }
            ASSERT_LE(got.size(), frames.size());
            if (piece == 0 && got.size() < frames.size()) {
                pollfd p{rx.fd(), POLLIN, 0};
                ASSERT_GT(::poll(&p, 1, 1000), 0) << "bytes sent but never received";
            }
        }
        EXPECT_EQ(got, frames) << "trial " << trial;
    }
}

TEST(Connection, SealedLargeFramesAreCheckedAndDelivered) {
    auto [tx, rx] = connected_pair();
    wire::Mac key{};
    key.fill(7);
    tx.seal(key, true);
    rx.seal(key, false);
    // Alone (the buffer is handed on), back to back (cut from one buffer), and small.
    const std::vector<Bytes> frames = {down_frame(2000, 64), down_frame(10, 1000),
                                       down_frame(3, 9000), down_frame(1, 8)};
    for (const Bytes& f : frames) tx.send(f);
    flush_all(tx);
    for (std::size_t i = 0; i < frames.size(); ++i) {
        Result<std::optional<OwnedFrame>> got = receive(rx);
        ASSERT_TRUE(got.ok()) << got.error().message;
        ASSERT_TRUE(got->has_value()) << "frame " << i;
        EXPECT_EQ((*got)->type, wire::MsgType::down);
        EXPECT_EQ(*(*got)->raw, frames[i]) << "frame " << i;
        Result<wire::Down> d = wire::decode_down((*got)->payload(), 4096);
        ASSERT_TRUE(d.ok()) << d.error().message;
    }
    // Once more with the buffer handed on: the next frame still arrives.
    tx.send(down_frame(1500, 64));
    flush_all(tx);
    Result<std::optional<OwnedFrame>> again = receive(rx);
    ASSERT_TRUE(again.ok() && again->has_value());
    EXPECT_EQ(*(*again)->raw, down_frame(1500, 64));
}

TEST(Connection, ALargeFrameUnderTheWrongKeyIsRefused) {
    auto [tx, rx] = connected_pair();
    wire::Mac key{};
    key.fill(7);
    wire::Mac other = key;
    other[31] ^= 1;
    tx.seal(key, true);
    rx.seal(other, false);
    tx.send(down_frame(2000, 64));
    flush_all(tx);
    Result<std::optional<OwnedFrame>> got = receive(rx);
    ASSERT_FALSE(got.ok()) << "a frame with a wrong MAC was accepted";
    EXPECT_NE(got.error().message.find("bad MAC"), std::string::npos) << got.error().message;
}

TEST(Connection, AFrameSentToManyPeersIsMacedForEach) {
    // One shared frame, one FrameDigests: each peer's MAC (its own key and sequence) checks.
    auto [tx1, rx1] = connected_pair();
    auto [tx2, rx2] = connected_pair();
    wire::Mac k1{}, k2{};
    k1.fill(1);
    k2.fill(2);
    tx1.seal(k1, false);
    rx1.seal(k1, true);
    tx2.seal(k2, false);
    rx2.seal(k2, true);
    FrameDigests digests;
    const auto frame = std::make_shared<const Bytes>(down_frame(50, 64));
    const auto second = std::make_shared<const Bytes>(down_frame(5, 64));
    for (Connection* c : {&tx1, &tx2}) c->send(frame, &digests);
    for (Connection* c : {&tx1, &tx2}) c->send(second, &digests);
    flush_all(tx1);
    flush_all(tx2);
    for (Connection* c : {&rx1, &rx2}) {
        for (const auto& want : {frame, second}) {
            Result<std::optional<OwnedFrame>> got = receive(*c);
            ASSERT_TRUE(got.ok()) << got.error().message;
            ASSERT_TRUE(got->has_value());
            EXPECT_EQ(*(*got)->raw, *want);
        }
    }
}

TEST(Fifo, FirstInFirstOutAcrossCompaction) {
    Fifo<std::string> q;
    EXPECT_TRUE(q.empty());
    int next_in = 0;
    int next_out = 0;
    // Never empty for long: the queue compacts instead of growing without bound.
    for (int round = 0; round < 500; ++round) {
        q.push_back(std::to_string(next_in++));
        q.push_back(std::to_string(next_in++));
        EXPECT_EQ(q.front(), std::to_string(next_out++));
        q.pop_front();
    }
    EXPECT_EQ(q.size(), static_cast<std::size_t>(next_in - next_out));
    std::vector<std::string> rest(q.begin(), q.end());
    ASSERT_EQ(rest.size(), q.size());
    EXPECT_EQ(rest.front(), std::to_string(next_out));
    while (!q.empty()) {
        EXPECT_EQ(q.front(), std::to_string(next_out++));
        q.pop_front();
    }
    EXPECT_EQ(next_out, next_in);
    q.push_back("again");
    EXPECT_EQ(q.front(), "again");
}

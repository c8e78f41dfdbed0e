// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/tcp/connection.hpp"

#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

#include "core/base/bytes.hpp"
#include "os/hmac_sha256.hpp"

namespace sddp::tcp {
namespace {

wire::Mac frame_mac(const HmacKey& key, std::uint8_t label, std::uint64_t seq,
                    const Digest& frame_digest) {
    return key.mac({std::span<const std::uint8_t>(&label, 1), be64(seq), frame_digest});
}

}  // namespace

const Digest& FrameDigests::of(const std::shared_ptr<const Bytes>& frame) {
    if (last_.lock() != frame) {
        digest_ = sha256(std::span<const std::uint8_t>(*frame));
        last_ = frame;
    }
    return digest_;
}

void Connection::seal(const wire::Mac& session_key, bool client) {
    key_.emplace(std::span<const std::uint8_t>(session_key.data(), session_key.size()));
    send_label_ = client ? 'c' : 's';
    recv_label_ = client ? 's' : 'c';
}

std::size_t Connection::rest_of_frame() const {
    const std::span<const std::uint8_t> held(in_.data() + in_pos_, in_.size() - in_pos_);
    const std::optional<std::uint32_t> payload = wire::declared_payload(held);
    if (!payload) return 0;
    const std::size_t whole = wire::kHeaderSize + *payload + (sealed() ? wire::kMacSize : 0);
    return whole > held.size() ? whole - held.size() : 0;
}

void Connection::read_available(std::size_t max_buffered) {
    if (eof_ || !fd_.valid()) return;
    if (sealed()) max_buffered += wire::kMacSize;
    // Compact consumed bytes first so the buffer does not creep forward forever.
    if (in_pos_ > 0 && in_pos_ >= in_.size() / 2) {
        in_.erase(in_.begin(), in_.begin() + static_cast<std::ptrdiff_t>(in_pos_));
        in_pos_ = 0;
    }
    for (;;) {
        // Stop at the cap, and after a large burst so one fast peer cannot starve the others;
        // level-triggered epoll brings us back for the rest once frames have been consumed.
        const std::size_t held = in_.size() - in_pos_;
        const std::size_t room = std::min<std::size_t>(max_buffered - std::min(held, max_buffered),
                                                       std::size_t{1} << 20);
        if (room == 0) return;
        // The rest of a large frame whose header is in goes straight into the buffer, sized
        // for it (one copy, and next_frame can hand the buffer on); anything else through a
        // page of stack, which a fresh process has touched already.
        const std::size_t rest = std::min(rest_of_frame(), room);
        std::size_t asked = 0;
        ssize_t n = 0;
        if (rest >= kDirectReceive) {
            const std::size_t at = in_.size();
            in_.resize(at + rest);
            asked = rest;
            n = ::recv(fd_.get(), in_.data() + at, asked, 0);
            in_.resize(at + (n > 0 ? static_cast<std::size_t>(n) : 0));
        } else {
            std::uint8_t buf[kDirectReceive];
            asked = std::min(sizeof buf, room);
            n = ::recv(fd_.get(), buf, asked, 0);
            if (n > 0) in_.insert(in_.end(), buf, buf + n);
        }
        if (n > 0) {
            if (in_.size() - in_pos_ >= (std::size_t{1} << 20)) return;
            // A short read drained the socket, and a large frame read whole is a frame to
            // handle: asking again would mostly return EAGAIN, one system call per message on
            // every rank. Level-triggered epoll (or the caller's poll) reports what arrives
            // later, and a pending EOF, on the next turn.
            if (static_cast<std::size_t>(n) < asked || rest >= kDirectReceive) return;
            continue;
        }
        if (n == 0) {
            eof_ = true;
            return;
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        last_errno_ = errno;
        eof_ = true;  // ECONNRESET and friends: the peer is gone
        return;
    }
}

Result<std::optional<OwnedFrame>> Connection::next_frame(std::uint32_t max_payload) {
    const std::span<const std::uint8_t> avail(in_.data() + in_pos_, in_.size() - in_pos_);
    SDDP_TRY(frame, wire::decode_frame(avail, max_payload));
    if (!frame) return std::optional<OwnedFrame>();
    const std::size_t trailer = sealed() ? wire::kMacSize : 0;
    if (avail.size() < frame->size + trailer) return std::optional<OwnedFrame>();
    const std::span<const std::uint8_t> bytes = avail.first(frame->size);
    if (sealed()) {
        const wire::Mac want = frame_mac(*key_, recv_label_, received_++, sha256(bytes));
        if (!constant_time_equal(want, avail.subspan(frame->size, wire::kMacSize))) {
            return make_error(Errc::protocol,
                              "a message failed its authentication check (bad MAC): something "
                              "on the network path altered, dropped or injected rendezvous "
                              "traffic");
        }
    }
    OwnedFrame out;
    out.type = frame->type;
    if (in_pos_ == 0 && in_.size() == frame->size + trailer && frame->size >= kDirectReceive) {
        // A large frame that is all the buffer holds: hand the buffer on instead of a copy.
        in_.resize(frame->size);
        out.raw = std::make_shared<const Bytes>(std::move(in_));
        in_ = Bytes();
        return std::optional<OwnedFrame>(std::move(out));
    }
    out.raw = std::make_shared<const Bytes>(bytes.begin(), bytes.end());
    in_pos_ += frame->size + trailer;
    if (in_pos_ == in_.size()) {
        in_.clear();
        in_pos_ = 0;
    }
    return std::optional<OwnedFrame>(std::move(out));
}

void Connection::send(std::shared_ptr<const Bytes> frame, FrameDigests* digests) {
    if (broken_ || !fd_.valid() || frame->empty()) return;
    if (sealed()) {
        const wire::Mac mac =
            frame_mac(*key_, send_label_, sent_++,
                      digests != nullptr ? digests->of(frame)
                                         : sha256(std::span<const std::uint8_t>(*frame)));
        out_.push_back(Chunk{std::move(frame), {}, 0});
        out_.push_back(Chunk{nullptr, mac, 0});
        return;
    }
    out_.push_back(Chunk{std::move(frame), {}, 0});
}

void Connection::flush() {
    while (!out_.empty() && !broken_ && fd_.valid()) {
        // One gathering write for everything queued (a frame and its MAC, a burst of frames):
        // one system call and, with TCP_NODELAY, one segment instead of one per chunk.
        constexpr std::size_t kMaxIov = 64;
        iovec iov[kMaxIov];
        std::size_t count = 0;
        for (auto it = out_.begin(); it != out_.end() && count < kMaxIov; ++it, ++count) {
            const std::span<const std::uint8_t> left = it->left();
            iov[count].iov_base = const_cast<std::uint8_t*>(left.data());
            iov[count].iov_len = left.size();
        }
        msghdr msg{};
        msg.msg_iov = iov;
        msg.msg_iovlen = count;
        const ssize_t n = ::sendmsg(fd_.get(), &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            auto left = static_cast<std::size_t>(n);
            while (left > 0) {
                Chunk& c = out_.front();
                const std::size_t rest = c.left().size();
                if (left < rest) {
                    c.offset += left;
                    break;
                }
                left -= rest;
                out_.pop_front();
            }
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        last_errno_ = n < 0 ? errno : EPIPE;
        broken_ = true;
        out_.clear();
    }
}

void Connection::shutdown_write() {
    if (fd_.valid()) ::shutdown(fd_.get(), SHUT_WR);
}

}  // namespace sddp::tcp

// SPDX-License-Identifier: Apache-2.0
// One non-blocking stream socket with buffered, frame-at-a-time I/O.
//
// Reads append to an input buffer from which whole frames are cut; a frame's length is checked
// against the caller's cap before any byte of its payload is awaited, so the buffer never holds
// more than one frame plus one read's worth. Writes queue shared, immutable frames (one encoded
// allgather result is queued to thousands of children without copying) and go out as the
// socket accepts them. MSG_NOSIGNAL everywhere: a peer that vanished is an error, not SIGPIPE.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/base/result.hpp"
#include "os/hmac_sha256.hpp"
#include "rendezvous/protocol/wire.hpp"
#include "rendezvous/tcp/fifo.hpp"
#include "rendezvous/tcp/socket.hpp"

namespace sddp::tcp {

// A received frame that owns its bytes, so it can be kept or forwarded verbatim.
struct OwnedFrame {
    wire::MsgType type{};
    std::shared_ptr<const Bytes> raw;  // header + payload
    std::span<const std::uint8_t> payload() const {
        return std::span<const std::uint8_t>(*raw).subspan(wire::kHeaderSize);
    }
};

// The SHA-256 of the last frame asked about. One frame sent to thousands of children goes out one
// send after the other, so remembering the last is enough to hash it once. A weak pointer, so
// that a new frame at a freed one's address is never mistaken for it.
class FrameDigests {
  public:
    const Digest& of(const std::shared_ptr<const Bytes>& frame);

  private:
    std::weak_ptr<const Bytes> last_;
    Digest digest_{};
};

class Connection {
  public:
    Connection(Fd fd, std::string peer_addr) : fd_(std::move(fd)), addr_(std::move(peer_addr)) {}

    int fd() const { return fd_.get(); }
    const std::string& addr() const { return addr_; }

    // Reads until the socket would block or `max_buffered` unconsumed bytes are held (an
    // unauthenticated peer gets a small cap). EOF and resets set eof(); they are not errors here
    // because whether a closed peer matters depends on what the caller still needs from it.
    void read_available(std::size_t max_buffered);
    // The next whole frame, nullopt if incomplete, Errc::protocol if the bytes are not ours.
    Result<std::optional<OwnedFrame>> next_frame(std::uint32_t max_payload);

    // `digests`: where a frame sent to many peers is hashed once for their MACs (none: hashed
    // here).
    void send(std::shared_ptr<const Bytes> frame, FrameDigests* digests = nullptr);
    void send(Bytes frame) { send(std::make_shared<const Bytes>(std::move(frame))); }
    // Writes queued bytes until the socket would block; a failed write sets broken().
    void flush();
    bool want_write() const { return !out_.empty() && !broken_; }

    bool eof() const { return eof_; }
    bool broken() const { return broken_; }
    int last_errno() const { return last_errno_; }
    std::size_t buffered_input() const { return in_.size() - in_pos_; }

    // From now on every frame sent is followed by its MAC and every frame received must carry
    // a valid one (see auth.hpp). `client`: which direction label this side sends with.
    void seal(const wire::Mac& session_key, bool client);
    bool sealed() const { return key_.has_value(); }

    // Half-close: the peer reads EOF once it has consumed what we queued.
    void shutdown_write();
    void close() { fd_.reset(); }

  private:
    // Frames from this size on are received straight into in_ and handed on without a copy.
    static constexpr std::size_t kDirectReceive = 4096;
    // How many bytes the frame whose header is buffered still lacks (its MAC included); 0 when
    // no header is buffered, or the frame is whole.
    std::size_t rest_of_frame() const;

    // A queued frame, or (bytes null) the MAC that follows a frame, kept inline.
    struct Chunk {
        std::shared_ptr<const Bytes> bytes;
        wire::Mac mac{};
        std::size_t offset = 0;
        std::span<const std::uint8_t> left() const {
            const std::span<const std::uint8_t> all =
                bytes ? std::span<const std::uint8_t>(*bytes) : std::span<const std::uint8_t>(mac);
            return all.subspan(offset);
        }
    };

    Fd fd_;
    std::string addr_;
    Bytes in_;
    std::size_t in_pos_ = 0;
    Fifo<Chunk> out_;
    bool eof_ = false;
    bool broken_ = false;
    std::optional<HmacKey> key_;  // the session key, set up once for every frame's MAC
    std::uint8_t send_label_ = 0;
    std::uint8_t recv_label_ = 0;
    std::uint64_t sent_ = 0;
    std::uint64_t received_ = 0;
    int last_errno_ = 0;
};

}  // namespace sddp::tcp

// SPDX-License-Identifier: Apache-2.0
// Records of big-endian fields: the one codec under the rendezvous's frames
// (rendezvous/protocol/wire), the preflight record and its verdict (rendezvous/protocol/preflight)
// and `slurm-ddp check`'s record (core/check/check_record).
//
// Integers are big-endian; text and byte blobs carry their length first, in 16 or 32 bits as each
// format fixed it. The reader takes arbitrary bytes (a peer's, a fuzzer's): every read checks the
// length first and never allocates beyond the input, and its first failure sticks, naming the
// field, so a decoder reads its fields in order and checks once at the end.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "core/base/bytes.hpp"
#include "core/base/result.hpp"

namespace sddp {

class FieldWriter {
  public:
    explicit FieldWriter(std::size_t reserve = 0) { out_.reserve(reserve); }

    void u8(std::uint8_t v) { out_.push_back(v); }
    void u16(std::uint16_t v) { put_be16(out_, v); }
    void u32(std::uint32_t v) { put_be32(out_, v); }
    void i32(std::int32_t v) { u32(static_cast<std::uint32_t>(v)); }
    void u64(std::uint64_t v) { put_be64(out_, v); }
    void raw(std::span<const std::uint8_t> b) { out_.insert(out_.end(), b.begin(), b.end()); }
    // Text is for people: cut to `cap` rather than refused.
    void str16(std::string_view s, std::size_t cap) {
        s = s.substr(0, cap);
        u16(static_cast<std::uint16_t>(s.size()));
        out_.insert(out_.end(), s.begin(), s.end());
    }
    void str32(std::string_view s, std::size_t cap) {
        s = s.substr(0, cap);
        u32(static_cast<std::uint32_t>(s.size()));
        out_.insert(out_.end(), s.begin(), s.end());
    }
    void blob32(std::span<const std::uint8_t> b) {
        u32(static_cast<std::uint32_t>(b.size()));
        raw(b);
    }

    Bytes& bytes() { return out_; }
    Bytes take() && { return std::move(out_); }

  private:
    Bytes out_;
};

class FieldReader {
  public:
    // `record` names what is read, in errors: "hello message" gives "hello message: host is
    // truncated".
    explicit FieldReader(std::span<const std::uint8_t> in, std::string_view record = "record")
        : in_(in), record_(record) {}

    bool ok() const { return error_.empty(); }
    const std::string& error() const { return error_; }
    std::size_t remaining() const { return in_.size() - pos_; }

    std::uint8_t u8(const char* field) { return number<std::uint8_t>(field); }
    std::uint16_t u16(const char* field) { return number<std::uint16_t>(field); }
    std::uint32_t u32(const char* field) { return number<std::uint32_t>(field); }
    std::int32_t i32(const char* field) { return static_cast<std::int32_t>(u32(field)); }
    std::uint64_t u64(const char* field) { return number<std::uint64_t>(field); }
    template <std::size_t N>
    void fixed(std::array<std::uint8_t, N>& out, const char* field) {
        const std::span<const std::uint8_t> b = take(N, field);
        if (!b.empty()) std::memcpy(out.data(), b.data(), N);
    }
    // Text or bytes after their length; a length over `cap` is a failure, not a cut.
    std::string str16(std::size_t cap, const char* field) { return text(u16(field), cap, field); }
    std::string str32(std::size_t cap, const char* field) { return text(u32(field), cap, field); }
    Bytes blob32(std::uint32_t cap, const char* field) {
        const std::span<const std::uint8_t> b = sized(u32(field), cap, field);
        return Bytes(b.begin(), b.end());
    }
    // The next `n` bytes as they are; empty once anything failed.
    std::span<const std::uint8_t> take(std::size_t n, const char* field) {
        if (!need(n, field)) return {};
        const auto part = in_.subspan(pos_, n);
        pos_ += n;
        return part;
    }

    // The first failure is the one reported; later reads return zeros and empty values.
    void fail(const char* field, const std::string& why);
    // Every byte read, or an Errc::protocol error naming the first failure: trailing bytes mean
    // the writer spoke something else.
    Status finish();

  private:
    bool need(std::size_t n, const char* field) {
        if (!ok()) return false;
        if (remaining() >= n) return true;
        fail(field, "is truncated");
        return false;
    }
    std::span<const std::uint8_t> sized(std::size_t n, std::size_t cap, const char* field) {
        if (!ok()) return {};
        if (n > cap) {
            fail(field, "is longer than its limit");
            return {};
        }
        return take(n, field);
    }
    std::string text(std::size_t n, std::size_t cap, const char* field) {
        const std::span<const std::uint8_t> b = sized(n, cap, field);
        return std::string(b.begin(), b.end());
    }
    template <typename T>
    T number(const char* field) {
        if (!need(sizeof(T), field)) return 0;
        T v = 0;
        for (std::size_t i = 0; i < sizeof(T); ++i) v = static_cast<T>((v << 8) | in_[pos_ + i]);
        pos_ += sizeof(T);
        return v;
    }

    std::span<const std::uint8_t> in_;
    std::size_t pos_ = 0;
    std::string_view record_;
    std::string error_;
};

}  // namespace sddp

// SPDX-License-Identifier: Apache-2.0
// Bytes: the one byte-string type, hex, and big-endian integers for everything that goes on a
// wire or into a MAC.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sddp {

using Bytes = std::vector<std::uint8_t>;

// Lower-case hex.
std::string to_hex(std::span<const std::uint8_t> data);
std::string to_hex(std::string_view data);

// 0..15 for a hex digit (either case), -1 otherwise.
int hex_digit(char c);

// Hex (either case, even length) to bytes; nullopt on any other character or an odd length.
std::optional<Bytes> from_hex(std::string_view hex);

// Appends `v` in network byte order.
void put_be16(Bytes& out, std::uint16_t v);
void put_be32(Bytes& out, std::uint32_t v);
void put_be64(Bytes& out, std::uint64_t v);

// Reads network byte order from the front of a buffer; every read checks the length and fails
// (nullopt) instead of reading past the end.
class BigEndianReader {
  public:
    explicit BigEndianReader(std::span<const std::uint8_t> in) : in_(in) {}
    std::optional<std::uint16_t> u16() { return read<std::uint16_t>(2); }
    std::optional<std::uint32_t> u32() { return read<std::uint32_t>(4); }
    std::optional<std::uint64_t> u64() { return read<std::uint64_t>(8); }
    // The next `n` bytes, or nullopt when fewer remain.
    std::optional<std::span<const std::uint8_t>> take(std::size_t n);
    std::size_t remaining() const { return in_.size() - pos_; }
    std::size_t position() const { return pos_; }

  private:
    template <typename T>
    std::optional<T> read(std::size_t n) {
        if (remaining() < n) return std::nullopt;
        T v = 0;
        for (std::size_t i = 0; i < n; ++i) v = static_cast<T>((v << 8) | in_[pos_ + i]);
        pos_ += n;
        return v;
    }
    std::span<const std::uint8_t> in_;
    std::size_t pos_ = 0;
};

}  // namespace sddp

// SPDX-License-Identifier: Apache-2.0
// Bytes: the one byte-string type, hex, and big-endian integers for everything that goes on a
// wire or into a MAC (records of such fields, and reading them back: field_codec.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sddp {

using Bytes = std::vector<std::uint8_t>;

// A string's bytes, for a hash or MAC's input: no copy.
inline std::span<const std::uint8_t> bytes_of(std::string_view s) {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// Lower-case hex.
std::string to_hex(std::span<const std::uint8_t> data);
std::string to_hex(std::string_view data);

// 0..15 for a hex digit (either case), -1 otherwise.
int hex_digit(char c);

// Hex (either case, even length) to bytes; nullopt on any other character or an odd length.
std::optional<Bytes> from_hex(std::string_view hex);

// `v` in network byte order, as a value: for input to a hash or MAC, where no Bytes need exist.
std::array<std::uint8_t, 4> be32(std::uint32_t v);
std::array<std::uint8_t, 8> be64(std::uint64_t v);

// Appends `v` in network byte order.
void put_be16(Bytes& out, std::uint16_t v);
void put_be32(Bytes& out, std::uint32_t v);
void put_be64(Bytes& out, std::uint64_t v);

}  // namespace sddp

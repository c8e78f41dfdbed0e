// SPDX-License-Identifier: Apache-2.0
#include "core/base/bytes.hpp"

namespace sddp {

std::string to_hex(std::span<const std::uint8_t> data) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    out.reserve(data.size() * 2);
    for (const std::uint8_t b : data) {
        out.push_back(kDigits[b >> 4]);
        out.push_back(kDigits[b & 0xf]);
    }
    return out;
}

std::string to_hex(std::string_view data) {
    return to_hex(bytes_of(data));
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

std::optional<Bytes> from_hex(std::string_view hex) {
    if (hex.size() % 2 != 0) return std::nullopt;
    Bytes out;
    out.reserve(hex.size() / 2);
    for (std::size_t i = 0; i < hex.size(); i += 2) {
        const int hi = hex_digit(hex[i]), lo = hex_digit(hex[i + 1]);
        if (hi < 0 || lo < 0) return std::nullopt;
        out.push_back(static_cast<std::uint8_t>(hi * 16 + lo));
    }
    return out;
}

void put_be16(Bytes& out, std::uint16_t v) {
    out.push_back(static_cast<std::uint8_t>(v >> 8));
    out.push_back(static_cast<std::uint8_t>(v));
}

std::array<std::uint8_t, 4> be32(std::uint32_t v) {
    std::array<std::uint8_t, 4> out{};
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = static_cast<std::uint8_t>(v >> (24 - 8 * i));
    return out;
}

std::array<std::uint8_t, 8> be64(std::uint64_t v) {
    std::array<std::uint8_t, 8> out{};
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = static_cast<std::uint8_t>(v >> (56 - 8 * i));
    return out;
}

void put_be32(Bytes& out, std::uint32_t v) {
    const auto b = be32(v);
    out.insert(out.end(), b.begin(), b.end());
}

void put_be64(Bytes& out, std::uint64_t v) {
    const auto b = be64(v);
    out.insert(out.end(), b.begin(), b.end());
}

}  // namespace sddp

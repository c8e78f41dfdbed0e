// SPDX-License-Identifier: Apache-2.0
#include "core/base/numbers.hpp"

#include "core/base/bytes.hpp"

namespace sddp {

std::optional<std::uint64_t> parse_decimal(std::string_view text, std::uint64_t max) {
    if (text.empty() || text.size() > 20) return std::nullopt;
    std::uint64_t v = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        const auto d = static_cast<std::uint64_t>(c - '0');
        if (v > (max - d) / 10) return std::nullopt;  // v*10+d would exceed max (or overflow)
        v = v * 10 + d;
    }
    return v;
}

std::string quote_value(std::string_view value, std::size_t max_chars) {
    std::string out = "'";
    std::size_t n = 0;
    for (char c : value) {
        if (n++ == max_chars) {
            out += "...' (" + std::to_string(value.size()) + " chars)";
            return out;
        }
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f) {
            out += "\\x" + to_hex(std::string_view(&c, 1));
        } else {
            out += c;
        }
    }
    out += "'";
    return out;
}

}  // namespace sddp

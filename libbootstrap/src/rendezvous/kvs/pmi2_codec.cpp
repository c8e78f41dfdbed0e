// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/kvs/pmi2_codec.hpp"

#include "core/base/bytes.hpp"
#include "core/base/numbers.hpp"

namespace sddp::pmi2 {
namespace {

Error bad_value(int rank, std::string_view why) {
    return make_error(Errc::protocol, "the PMI2 value from rank " + std::to_string(rank) + " is " +
                                          std::string(why) +
                                          ": another program is using the same PMI2 keys, or "
                                          "ranks run different libbootstrap releases");
}

}  // namespace

std::string key(std::uint64_t seq, int rank, std::size_t chunk) {
    std::string k = "sddp." + std::to_string(seq) + "." + std::to_string(rank);
    if (chunk > 0) k += "." + std::to_string(chunk);
    return k;
}

std::size_t chunk_count(std::size_t total) {
    return total == 0 ? 1 : (total + kChunkBytes - 1) / kChunkBytes;
}

std::vector<std::string> encode_values(std::span<const std::uint8_t> bytes) {
    std::vector<std::string> out;
    const std::size_t n = chunk_count(bytes.size());
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        const auto part = bytes.subspan(
            std::min(i * kChunkBytes, bytes.size()),
            std::min(kChunkBytes, bytes.size() - std::min(i * kChunkBytes, bytes.size())));
        out.push_back(i == 0 ? std::to_string(bytes.size()) + ":" + to_hex(part) : to_hex(part));
    }
    return out;
}

Result<std::vector<std::uint8_t>> decode_hex(std::string_view h, int rank) {
    if (h.size() % 2 != 0 || h.size() > kChunkBytes * 2) return bad_value(rank, "malformed hex");
    auto out = from_hex(h);
    if (!out) return bad_value(rank, "malformed hex");
    return std::move(*out);
}

Result<FirstChunk> decode_first(std::string_view value, int rank) {
    const auto colon = value.find(':');
    if (colon == std::string_view::npos) return bad_value(rank, "missing its length");
    const auto total = parse_decimal(value.substr(0, colon), kMaxRecordBytes);
    if (!total) return bad_value(rank, "carrying a bad length");
    SDDP_TRY(bytes, decode_hex(value.substr(colon + 1), rank));
    if (bytes.size() != std::min(*total, kChunkBytes)) return bad_value(rank, "truncated");
    return FirstChunk{static_cast<std::size_t>(*total), std::move(bytes)};
}

}  // namespace sddp::pmi2

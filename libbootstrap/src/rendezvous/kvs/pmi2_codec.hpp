// SPDX-License-Identifier: Apache-2.0
// How records travel through the PMI2 key-value space. Pure.
//
// PMI2 values are strings of at most PMI2_MAX_VALLEN (1024) bytes including the NUL, and
// Slurm's wire protocol reserves ';' and '=', so bytes are hex-encoded (safe everywhere; the
// records here are small) and split into chunks. Keys carry a sequence number so that no key is
// ever put twice (PMI2 leaves that undefined):
//   "sddp.<seq>.<rank>"      "<total bytes>:<hex of the first chunk>"
//   "sddp.<seq>.<rank>.<i>"  "<hex of chunk i>"   for i = 1 .. chunks-1
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/result.hpp"

namespace sddp::pmi2 {

inline constexpr std::size_t kMaxValueChars = 1023;  // PMI2_MAX_VALLEN - NUL
inline constexpr std::size_t kChunkBytes = 500;      // 1000 hex chars + a length prefix
inline constexpr std::size_t kMaxRecordBytes = 1u << 20;

std::string key(std::uint64_t seq, int rank, std::size_t chunk);

// The values to put, in chunk order (at least one, even for an empty record).
std::vector<std::string> encode_values(std::span<const std::uint8_t> bytes);

// First value -> total size and the bytes it holds; errors name the rank for messages.
struct FirstChunk {
    std::size_t total = 0;
    std::vector<std::uint8_t> bytes;
};
Result<FirstChunk> decode_first(std::string_view value, int rank);
Result<std::vector<std::uint8_t>> decode_hex(std::string_view hex, int rank);
std::size_t chunk_count(std::size_t total);

}  // namespace sddp::pmi2

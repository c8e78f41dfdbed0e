// SPDX-License-Identifier: Apache-2.0
// How records are named in the PMIx key-value space. Pure.
//
// PMIx values are typed, so a record travels as one byte object (no hex, no chunks, unlike
// PMI2). Keys are per process, so they need not carry the rank; they carry a sequence number so
// that no key is ever put twice (a second put would replace the first before a slow peer read
// it):  "sddp.<seq>". Keys starting with "pmix" are reserved by the standard; ours never do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace sddp::pmix {

// Far above any preflight or id record; keeps one rank's mistake from flooding every node.
inline constexpr std::size_t kMaxRecordBytes = 16u << 20;

std::string key(std::uint64_t seq);

}  // namespace sddp::pmix

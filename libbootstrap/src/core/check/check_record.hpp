// SPDX-License-Identifier: Apache-2.0
// What one rank of `slurm-ddp check` saw of its node, and how that travels between the ranks.
//
// Each rank gathers a CheckRecord by I/O (tools/check/check_facts), the records are exchanged
// through the library's rendezvous, and every rank judges them (check_verdict.hpp). Nothing here
// does I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/base/result.hpp"

namespace sddp {

// What one rank saw. Strings are empty where there is nothing to say; *_error says why a fact
// could not be learnt (and is itself a problem where it matters).
struct CheckRecord {
    std::uint32_t rank = 0;
    std::uint32_t world_size = 1;
    std::int32_t node_rank = -1;  // -1: the launcher did not say
    std::string host;
    std::string host_address;  // first address this node's own name resolves to
    std::string host_error;
    std::string master_addr;  // MASTER_ADDR as given (TCP rendezvous); empty under PMI2
    std::uint32_t master_port = 0;
    std::string master_address;  // what MASTER_ADDR resolves to here
    std::string master_error;
    std::string interface;  // interface whose address the route to MASTER_ADDR leaves from
    std::string interface_error;
    std::string port_error;  // rank 0 only: MASTER_PORT cannot be listened on
    std::string gpu;         // "none", or e.g. "1 (/dev/nvidia1)": the device this rank would use
    std::string gpu_key;     // identifies that device on its host (device file or bus id)
    std::string gpu_error;
    std::string versions;  // library and driver versions, compared across ranks
    // Boot id + network namespace: equal for "nodes" that share one host's network stack (a test
    // cluster, several slurmd on one machine), where loopback does reach rank 0. Empty: unknown.
    std::string network;
    bool operator==(const CheckRecord&) const = default;
};

// Fixed size, because the library's allgather takes one length for every rank. Long fields are
// cut to fit (they are for people to read); decode refuses anything that is not a record.
inline constexpr std::size_t kCheckRecordBytes = 2048;
std::vector<std::uint8_t> encode_check_record(const CheckRecord& r);
Result<CheckRecord> decode_check_record(std::span<const std::uint8_t> bytes);

}  // namespace sddp

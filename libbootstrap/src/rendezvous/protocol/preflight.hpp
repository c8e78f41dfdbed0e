// SPDX-License-Identifier: Apache-2.0
// Preflight: before NCCL, every rank shares a short record and all check the same list.
//
// Why: NCCL's own errors for a bad launch are late and vague. Two ranks on one GPU end in
// "Duplicate GPU detected" after a full bootstrap; a rank from another step or with another
// world size hangs or joins the wrong job. With the records all-gathered, every rank computes
// the same verdict and fails fast with a message that names the ranks, the host, the bus id and
// the fix. Pure: records in, verdict out; encoding is a small length-prefixed format.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/base/result.hpp"

namespace sddp {

struct PreflightRecord {
    std::string step_tag;
    std::uint32_t world_size = 0;
    std::uint32_t rank = 0;
    std::string host;
    std::string pci_bus_id;  // "0000:3b:00.0", empty without a GPU
    std::int32_t cuda_device = -1;
    // Why this rank cannot go on (its GPU could not be selected), empty when it can. Shared so
    // that every rank fails at once naming it, instead of waiting for it in NCCL's init.
    std::string error;
    // The NCCL this rank loaded (ncclGetVersion, 0 without NCCL) and the NCCL options it asked
    // for ("local=1 ids=1"): ranks that differ would fail or hang inside NCCL's init.
    std::uint32_t nccl_version = 0;
    std::string nccl_options;
    bool operator==(const PreflightRecord&) const = default;
};

std::vector<std::uint8_t> encode_preflight(const PreflightRecord& r);
Result<PreflightRecord> decode_preflight(std::span<const std::uint8_t> bytes);

// `all[i]` is what rank i sent. Checks, in order: every record is rank i's, from this step,
// with this world size; no rank reported an error; every rank has rank 0's NCCL version and NCCL
// options; no two ranks share a GPU (same host and bus id).
Status check_preflight(const std::vector<PreflightRecord>& all, const PreflightRecord& mine);

// Rank 0's verdict after a gather (the scalable preflight: records go up, only this comes down):
// ok, or check_preflight's error with its code and message.
std::vector<std::uint8_t> encode_verdict(const Status& verdict);
// The verdict as rank 0 sent it; a malformed one is an Errc::protocol error of its own.
Status decode_verdict(std::span<const std::uint8_t> bytes);

// Node membership from the host names: node index per rank, numbered by first appearance (so
// rank 0's host is node 0), for launchers that do not say which node a rank is on.
struct NodeLayout {
    std::vector<std::uint32_t> node_of_rank;
    std::uint32_t num_nodes = 0;
    std::vector<std::uint32_t> local_rank;        // position among the ranks of its host
    std::vector<std::uint32_t> local_world_size;  // ranks on its host
};
NodeLayout node_layout_from_hosts(const std::vector<PreflightRecord>& all);

}  // namespace sddp

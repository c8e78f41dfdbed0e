// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/protocol/join_pacing.hpp"

#include <algorithm>
#include <cstdint>

namespace sddp {

std::chrono::microseconds join_delay(std::uint32_t node_rank, std::uint32_t backlog) {
    // Half the queue per batch: room for retries, strays and rank 0's own locals.
    const std::uint64_t batch = std::max<std::uint64_t>(backlog / 2, kMinJoinBatch);
    const std::uint64_t index = node_rank / batch;
    return std::chrono::microseconds(static_cast<std::int64_t>(index * batch) * kAdmitCost);
}

std::chrono::microseconds retry_pause(std::chrono::microseconds backoff,
                                      std::chrono::microseconds waited,
                                      std::chrono::microseconds first) {
    return std::max(first, std::min(backoff, waited / 4));
}

}  // namespace sddp

// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/kvs/kvs_transport.hpp"

#include <cstdint>
#include <utility>

namespace sddp {

Error KvsTransport::fail(Errc code, const std::string& what) const {
    return make_error(code, label_ + " rendezvous, rank " + std::to_string(cfg_.rank) + " on " +
                                cfg_.host + ": " + what);
}

Status KvsTransport::usable() const {
    if (aborted_) return fail(Errc::peer_lost, "aborted earlier: " + *aborted_);
    return ok_status();
}

Result<std::vector<Bytes>> KvsTransport::get_many(std::uint64_t seq, const std::vector<int>& srcs,
                                                  Clock::time_point deadline) {
    std::vector<Bytes> out;
    out.reserve(srcs.size());
    for (int src : srcs) {
        SDDP_TRY(got, get(seq, src, deadline));
        out.push_back(std::move(got));
    }
    return out;
}

Status KvsTransport::broadcast(Bytes& bytes, int root) {
    SDDP_CHECK(usable());
    if (root < 0 || root >= cfg_.world_size) {
        return make_error(Errc::invalid_input, "broadcast root " + std::to_string(root) +
                                                   " is not a rank of this world");
    }
    const auto deadline = Clock::now() + cfg_.timeout;
    const std::uint64_t seq = next_seq();
    if (cfg_.rank == root) SDDP_CHECK(put(seq, bytes, deadline));
    SDDP_CHECK(fence(deadline, "broadcast from rank " + std::to_string(root)));
    if (cfg_.rank != root) {
        SDDP_TRY(got, get(seq, root, deadline));
        bytes = std::move(got);
    }
    return ok_status();
}

Result<std::vector<Bytes>> KvsTransport::read_all(std::uint64_t seq,
                                                  std::span<const std::uint8_t> mine,
                                                  Clock::time_point deadline) {
    std::vector<int> others;
    others.reserve(static_cast<std::size_t>(cfg_.world_size));
    for (int r = 0; r < cfg_.world_size; ++r)
        if (r != cfg_.rank) others.push_back(r);
    SDDP_TRY(got, get_many(seq, others, deadline));
    std::vector<Bytes> out(static_cast<std::size_t>(cfg_.world_size));
    out[static_cast<std::size_t>(cfg_.rank)].assign(mine.begin(), mine.end());
    for (std::size_t i = 0; i < others.size(); ++i)
        out[static_cast<std::size_t>(others[i])] = std::move(got[i]);
    return out;
}

Result<std::vector<Bytes>> KvsTransport::allgather(std::span<const std::uint8_t> mine) {
    SDDP_CHECK(usable());
    const auto deadline = Clock::now() + cfg_.timeout;
    const std::uint64_t seq = next_seq();
    SDDP_CHECK(put(seq, mine, deadline));
    SDDP_CHECK(fence(deadline, "allgather"));
    return read_all(seq, mine, deadline);
}

Result<std::vector<Bytes>> KvsTransport::gather(std::span<const std::uint8_t> mine) {
    SDDP_CHECK(usable());
    const auto deadline = Clock::now() + cfg_.timeout;
    const std::uint64_t seq = next_seq();
    SDDP_CHECK(put(seq, mine, deadline));
    SDDP_CHECK(fence(deadline, "gather"));
    if (cfg_.rank != 0) return std::vector<Bytes>{};
    return read_all(seq, mine, deadline);
}

Status KvsTransport::barrier() {
    SDDP_CHECK(usable());
    return fence(Clock::now() + cfg_.timeout, "barrier");
}

}  // namespace sddp

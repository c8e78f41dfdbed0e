// SPDX-License-Identifier: Apache-2.0
// The collectives of a launcher's key-value interface (PMI2, PMIx): each rank puts its value
// under a fresh sequence number, everyone fences, and readers get the values they need. The
// transports differ only in those three calls, so the collectives are written once here.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rendezvous/transport.hpp"

namespace sddp {

class KvsTransport : public Transport {
  public:
    using Clock = std::chrono::steady_clock;

    int rank() const override { return cfg_.rank; }
    int world_size() const override { return cfg_.world_size; }
    Status broadcast(Bytes& bytes, int root) override;
    Result<std::vector<Bytes>> allgather(std::span<const std::uint8_t> mine) override;
    // Only rank 0 reads the KVS: the other ranks' gets are what makes an allgather O(N^2).
    Result<std::vector<Bytes>> gather(std::span<const std::uint8_t> mine) override;
    Status barrier() override;
    // The launchers' own abort calls end the process (PMI2) or the whole step (PMIx): never
    // called; the peers reach their own deadline instead.
    void abort(std::string_view reason) override { aborted_ = std::string(reason); }

  protected:
    // `label` names the interface in errors: "PMI2", "PMIx".
    KvsTransport(const RendezvousConfig& cfg, std::string label)
        : cfg_(cfg), label_(std::move(label)) {}

    virtual std::uint64_t next_seq() = 0;
    virtual Status put(std::uint64_t seq, std::span<const std::uint8_t> bytes,
                       Clock::time_point deadline) = 0;
    virtual Status fence(Clock::time_point deadline, const std::string& what) = 0;
    virtual Result<Bytes> get(std::uint64_t seq, int src, Clock::time_point deadline) = 0;
    // The values of every rank in `srcs`, in that order. A gather reads N - 1 of them at rank 0;
    // a transport that hands each call to a worker thread overrides this to make one hand-off
    // for all of them instead of one per value (on a loaded node each hand-off waits for the
    // scheduler twice). The default calls get() for each.
    virtual Result<std::vector<Bytes>> get_many(std::uint64_t seq, const std::vector<int>& srcs,
                                                Clock::time_point deadline);

    // "<label> rendezvous, rank R on HOST: what".
    Error fail(Errc code, const std::string& what) const;

    RendezvousConfig cfg_;

  private:
    Status usable() const;
    // Every rank's value of collective `seq`, in rank order, this rank's own from `mine`.
    Result<std::vector<Bytes>> read_all(std::uint64_t seq, std::span<const std::uint8_t> mine,
                                        Clock::time_point deadline);

    std::string label_;
    std::optional<std::string> aborted_;
};

}  // namespace sddp

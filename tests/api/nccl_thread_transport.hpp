// SPDX-License-Identifier: Apache-2.0
// N ranks of one process, one thread each, exchanging over shared memory: the Transport the NCCL
// layer's agreement tests run on (the fakes are per process, so ranks are threads here).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "rendezvous/transport.hpp"

namespace sddp_test {

// What the ranks share: round k holds every rank's contribution to its k-th collective.
struct ThreadHub {
    explicit ThreadHub(int n) : size(n) {}
    int size;
    std::mutex mu;
    std::condition_variable cv;
    std::map<int, std::vector<std::optional<sddp::Bytes>>> rounds;
};

class ThreadTransport final : public sddp::Transport {
  public:
    ThreadTransport(std::shared_ptr<ThreadHub> hub, int rank) : hub_(std::move(hub)), rank_(rank) {}
    int rank() const override { return rank_; }
    int world_size() const override { return hub_->size; }
    std::string_view name() const override { return "threads"; }

    sddp::Status broadcast(sddp::Bytes& bytes, int root) override {
        auto all = exchange(rank_ == root ? bytes : sddp::Bytes{});
        if (!all) return all.error();
        bytes = (*all)[static_cast<std::size_t>(root)];
        return sddp::ok_status();
    }
    sddp::Result<std::vector<sddp::Bytes>> allgather(std::span<const std::uint8_t> mine) override {
        return exchange(sddp::Bytes(mine.begin(), mine.end()));
    }
    sddp::Result<std::vector<sddp::Bytes>> gather(std::span<const std::uint8_t> mine) override {
        auto all = exchange(sddp::Bytes(mine.begin(), mine.end()));
        if (all && rank_ != 0) all->clear();
        return all;
    }
    sddp::Status barrier() override {
        auto all = exchange({});
        if (!all) return all.error();
        return sddp::ok_status();
    }
    void abort(std::string_view) override {}

  private:
    sddp::Result<std::vector<sddp::Bytes>> exchange(sddp::Bytes mine) {
        const int round = next_round_++;
        std::unique_lock<std::mutex> lock(hub_->mu);
        auto& slots = hub_->rounds[round];
        slots.resize(static_cast<std::size_t>(hub_->size));
        slots[static_cast<std::size_t>(rank_)] = std::move(mine);
        hub_->cv.notify_all();
        const bool all_in = hub_->cv.wait_for(lock, std::chrono::seconds(20), [&] {
            for (const auto& s : hub_->rounds[round])
                if (!s) return false;
            return true;
        });
        if (!all_in) return sddp::make_error(sddp::Errc::timeout, "a rank did not arrive");
        std::vector<sddp::Bytes> out;
        for (const auto& s : hub_->rounds[round]) out.push_back(*s);
        return out;
    }

    std::shared_ptr<ThreadHub> hub_;
    int rank_;
    int next_round_ = 0;
};

}  // namespace sddp_test

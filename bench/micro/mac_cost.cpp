// SPDX-License-Identifier: Apache-2.0
// mac_cost: what one frame MAC costs through the library's HMAC (os/hmac_sha256), keyed for each
// MAC against started from a prepared HmacKey (what a connection does for every frame since it
// keeps its session key set up). Wall clock, 200000 MACs of 41 bytes (a frame MAC's input: label,
// sequence number, the frame's SHA-256) per row, three rounds, after libcrypto's set-up.
//
//   cmake -DSDDP_BUILD_BENCH=ON ... && cmake --build build-bench --target mac_cost
//   build-bench/bench/mac_cost
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <span>

#include "os/hmac_sha256.hpp"

namespace {

constexpr int kMacs = 200000;
volatile unsigned g_sink = 0;  // keeps the MACs from being optimised away

template <typename StartMac>
double us_per_mac(StartMac start) {
    std::uint8_t input[41] = {'s', 0, 0, 0, 0, 0, 0, 0, 1};
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kMacs; ++i) {
        sddp::HmacSha256 h = start();
        input[8] = static_cast<std::uint8_t>(i);
        h.update(std::span<const std::uint8_t>(input, sizeof input));
        g_sink = g_sink + h.finish()[0];
    }
    const auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::micro>(t1 - t0).count() / kMacs;
}

}  // namespace

int main() {
    const std::uint8_t raw_key[32] = {0x5d, 0x17, 0x42};
    const std::span<const std::uint8_t> key(raw_key, sizeof raw_key);
    g_sink = sddp::hmac_sha256("set libcrypto up first", {})[0];
    const sddp::HmacKey prepared(key);
    std::printf("%-6s %-26s %-26s\n", "round", "keyed per MAC, us", "HmacKey::start, us");
    for (int round = 1; round <= 3; ++round) {
        const double each = us_per_mac([&] { return sddp::HmacSha256(key); });
        const double started = us_per_mac([&] { return prepared.start(); });
        std::printf("%-6d %-26.3f %-26.3f\n", round, each, started);
    }
    return 0;
}

// SHA-256, HMAC-SHA256, a constant-time compare and kernel randomness.
//
// The rendezvous authenticates peers with a per-step secret. Pulling in OpenSSL for one hash
// would add a runtime dependency to every trainer process, so this is a small, self-contained
// implementation (FIPS 180-4, RFC 2104) checked against the FIPS and RFC 4231 vectors.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace sddp {

inline constexpr std::size_t kSha256Size = 32;
using Digest = std::array<std::uint8_t, kSha256Size>;

// Incremental SHA-256, for hashing several fields without first concatenating them.
class Sha256 {
  public:
    Sha256();
    void update(std::span<const std::uint8_t> data);
    void update(std::string_view data);
    Digest finish();

  private:
    void compress(const std::uint8_t* block);

    std::array<std::uint32_t, 8> state_;
    std::array<std::uint8_t, 64> block_{};
    std::size_t block_len_ = 0;
    std::uint64_t total_len_ = 0;
};

Digest sha256(std::span<const std::uint8_t> data);
Digest sha256(std::string_view data);

// Incremental HMAC-SHA256 (RFC 2104): keys longer than a block are hashed first.
class HmacSha256 {
  public:
    explicit HmacSha256(std::span<const std::uint8_t> key);
    explicit HmacSha256(std::string_view key);
    void update(std::span<const std::uint8_t> data) { inner_.update(data); }
    void update(std::string_view data) { inner_.update(data); }
    Digest finish();

  private:
    Sha256 inner_;
    std::array<std::uint8_t, 64> outer_key_{};
};

Digest hmac_sha256(std::string_view key, std::span<const std::uint8_t> data);

// Compares without an early exit, so the time taken does not reveal how many leading bytes of
// a forged MAC were right. Lengths are not secret: different lengths compare unequal at once.
bool constant_time_equal(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b);

}  // namespace sddp

// SPDX-License-Identifier: Apache-2.0
// SHA-256, HMAC-SHA256 and a constant-time compare.
//
// The rendezvous authenticates peers with a per-step secret. The hash, the MAC and the compare
// come from a maintained, reviewed library that sites already trust (and patch), rather than a
// copy of our own, chosen at build time (SDDP_CRYPTO): Nettle by default, which costs a process
// nothing before its first MAC; OpenSSL's libcrypto where a site needs its FIPS provider. This
// header keeps the callers unaware of which (docs/perf-process-cost.md).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <thread>

#include "core/base/result.hpp"

namespace sddp {

// OpenSSL 3's libcrypto sets itself up once per process, on the first hash or MAC: it reads the
// site's openssl.cnf (which may demand the FIPS provider), activates the providers it names and
// builds its algorithm tables; about 0.9 ms of CPU in a process that has not used libcrypto yet,
// nearly nothing in a Python process (importing torch has already imported ssl and hashlib).
// CryptoWarmup starts that set-up on a thread of its own, so that it runs while the caller does
// other work (loading NCCL, resolving MASTER_ADDR, connecting); the first hash or MAC then waits
// for it if it has not finished. Its destructor joins the thread, so no thread of ours outlives
// the caller's scope (a fork or an exit while it runs would be unsafe). Nettle has no set-up:
// there the warm-up starts nothing and crypto_ready() is always true.
class CryptoWarmup {
  public:
    CryptoWarmup() = default;
    ~CryptoWarmup();
    CryptoWarmup(CryptoWarmup&&) noexcept = default;
    CryptoWarmup& operator=(CryptoWarmup&&) = delete;
    CryptoWarmup(const CryptoWarmup&) = delete;
    CryptoWarmup& operator=(const CryptoWarmup&) = delete;
    // Whether this warm-up started the thread (only the first one in a process does).
    bool started() const { return worker_.joinable(); }

  private:
    friend CryptoWarmup start_crypto_warmup();
    std::thread worker_;
};

// Returns at once; a process where the set-up is done or under way gets an empty warm-up. If no
// thread can be started, the set-up simply happens on the first hash or MAC, as without it.
CryptoWarmup start_crypto_warmup();

// Whether the library's set-up has finished in this process (by a warm-up or a first hash).
bool crypto_ready();

// The library and its version, as loaded ("Nettle 3.8", "OpenSSL 3.0.19 ..."), for reports.
std::string crypto_library();

inline constexpr std::size_t kSha256Size = 32;
using Digest = std::array<std::uint8_t, kSha256Size>;

// Incremental SHA-256, for hashing several fields without first concatenating them. finish()
// ends it: a second finish() or an update() after it is a programming error (abort).
class Sha256 {
  public:
    Sha256();
    ~Sha256();
    Sha256(Sha256&&) noexcept;
    Sha256& operator=(Sha256&&) noexcept;
    void update(std::span<const std::uint8_t> data);
    void update(std::string_view data);
    Digest finish();

  private:
    struct State;
    std::unique_ptr<State> state_;
};

Digest sha256(std::span<const std::uint8_t> data);
Digest sha256(std::string_view data);

class HmacKey;

// Incremental HMAC-SHA256 (RFC 2104): keys longer than a block are hashed first.
class HmacSha256 {
  public:
    explicit HmacSha256(std::span<const std::uint8_t> key);
    explicit HmacSha256(std::string_view key);
    ~HmacSha256();
    HmacSha256(HmacSha256&&) noexcept;
    HmacSha256& operator=(HmacSha256&&) noexcept;
    void update(std::span<const std::uint8_t> data);
    void update(std::string_view data);
    Digest finish();

  private:
    friend class HmacKey;
    struct State;
    explicit HmacSha256(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
};

// A key set up once for many MACs (a connection's session key signs every frame): start() copies
// a keyed context instead of setting the key up again (two of a short MAC's four compressions).
class HmacKey {
  public:
    explicit HmacKey(std::span<const std::uint8_t> key);
    explicit HmacKey(std::string_view key);
    ~HmacKey();
    HmacKey(HmacKey&&) noexcept;
    HmacKey& operator=(HmacKey&&) noexcept;
    HmacSha256 start() const;
    // The MAC of `parts` in order, as start(), an update() each and finish() give it, with no
    // context allocated for it (a connection signs and checks every frame with this).
    Digest mac(std::initializer_list<std::span<const std::uint8_t>> parts) const;

  private:
    HmacSha256 keyed_;  // never updated or finished: the template start() copies
};

Digest hmac_sha256(std::string_view key, std::span<const std::uint8_t> data);

// Compares without an early exit, so the time taken does not reveal how many leading bytes of
// a forged MAC were right. Lengths are not secret: different lengths compare unequal at once.
bool constant_time_equal(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b);

}  // namespace sddp

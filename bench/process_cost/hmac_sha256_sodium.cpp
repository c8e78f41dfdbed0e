// SPDX-License-Identifier: Apache-2.0
// os/hmac_sha256.hpp over libsodium, for bench/process_cost only: a candidate measured against
// Nettle and libcrypto (docs/performance.md, "Per-process cost"), not a build of the
// library.
#include <sodium.h>

#include <cstdlib>
#include <string>

#include "core/base/bytes.hpp"
#include "os/hmac_sha256.hpp"

namespace sddp {
namespace {

// libsodium asks for sodium_init() before any other call: it picks implementations by CPU.
void init_once() {
    static const int ok = sodium_init();
    if (ok < 0) std::abort();
}

}  // namespace

std::string crypto_library() {
    return std::string("libsodium ") + sodium_version_string();
}

bool crypto_ready() {
    return true;
}

CryptoWarmup::~CryptoWarmup() {
    if (worker_.joinable()) worker_.join();
}

CryptoWarmup start_crypto_warmup() {
    return CryptoWarmup();
}

struct Sha256::State {
    crypto_hash_sha256_state st{};
};

Sha256::Sha256() : state_(std::make_unique<State>()) {
    init_once();
    crypto_hash_sha256_init(&state_->st);
}
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;
void Sha256::update(std::span<const std::uint8_t> data) {
    crypto_hash_sha256_update(&state_->st, data.data(), data.size());
}
void Sha256::update(std::string_view data) {
    update(bytes_of(data));
}
Digest Sha256::finish() {
    Digest out{};
    crypto_hash_sha256_final(&state_->st, out.data());
    return out;
}
Digest sha256(std::span<const std::uint8_t> data) {
    Sha256 h;
    h.update(data);
    return h.finish();
}
Digest sha256(std::string_view data) {
    return sha256(bytes_of(data));
}

struct HmacSha256::State {
    crypto_auth_hmacsha256_state st{};
};

HmacSha256::HmacSha256(std::span<const std::uint8_t> key) : state_(std::make_unique<State>()) {
    init_once();
    crypto_auth_hmacsha256_init(&state_->st, key.data(), key.size());
}
HmacSha256::HmacSha256(std::string_view key) : HmacSha256(bytes_of(key)) {}
HmacSha256::HmacSha256(std::unique_ptr<State> state) : state_(std::move(state)) {}
HmacSha256::~HmacSha256() = default;
HmacSha256::HmacSha256(HmacSha256&&) noexcept = default;
HmacSha256& HmacSha256::operator=(HmacSha256&&) noexcept = default;
void HmacSha256::update(std::span<const std::uint8_t> data) {
    crypto_auth_hmacsha256_update(&state_->st, data.data(), data.size());
}
void HmacSha256::update(std::string_view data) {
    update(bytes_of(data));
}
Digest HmacSha256::finish() {
    Digest out{};
    crypto_auth_hmacsha256_final(&state_->st, out.data());
    return out;
}

HmacKey::HmacKey(std::span<const std::uint8_t> key) : keyed_(key) {}
HmacKey::HmacKey(std::string_view key) : keyed_(key) {}
HmacKey::~HmacKey() = default;
HmacKey::HmacKey(HmacKey&&) noexcept = default;
HmacKey& HmacKey::operator=(HmacKey&&) noexcept = default;
HmacSha256 HmacKey::start() const {
    return HmacSha256(std::make_unique<HmacSha256::State>(*keyed_.state_));
}

Digest HmacKey::mac(std::initializer_list<std::span<const std::uint8_t>> parts) const {
    HmacSha256 h = start();
    for (const std::span<const std::uint8_t> part : parts) h.update(part);
    return h.finish();
}

Digest hmac_sha256(std::string_view key, std::span<const std::uint8_t> data) {
    HmacSha256 h(key);
    h.update(data);
    return h.finish();
}

bool constant_time_equal(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) {
    if (a.size() != b.size()) return false;
    return a.empty() || sodium_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace sddp

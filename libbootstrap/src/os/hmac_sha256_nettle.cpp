// SPDX-License-Identifier: Apache-2.0
// os/hmac_sha256.hpp over Nettle: plain structures and functions, no library state, so a process
// pays nothing before its first MAC (OpenSSL 3 pays for its configuration and providers there).
#include <nettle/hmac.h>
#include <nettle/memops.h>
#include <nettle/sha2.h>
#include <nettle/version.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/base/bytes.hpp"
#include "os/hmac_sha256.hpp"

namespace sddp {
namespace {

[[noreturn]] void used_after_finish(const char* what) {
    (void)std::fprintf(stderr, "slurm-ddp: %s after finish() (a bug in slurm-ddp)\n", what);
    std::abort();
}

}  // namespace

std::string crypto_library() {
    return "Nettle " + std::to_string(nettle_version_major()) + "." +
           std::to_string(nettle_version_minor());
}

bool crypto_ready() {
    return true;
}

CryptoWarmup::~CryptoWarmup() {
    if (worker_.joinable()) worker_.join();
}

// Nettle has nothing to set up: no thread is worth starting.
CryptoWarmup start_crypto_warmup() {
    return CryptoWarmup();
}

struct Sha256::State {
    sha256_ctx ctx{};
    bool finished = false;
};

Sha256::Sha256() : state_(std::make_unique<State>()) {
    sha256_init(&state_->ctx);
}

Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(std::span<const std::uint8_t> data) {
    if (state_->finished) used_after_finish("Sha256::update");
    sha256_update(&state_->ctx, data.size(), data.data());
}

void Sha256::update(std::string_view data) {
    update(bytes_of(data));
}

Digest Sha256::finish() {
    if (state_->finished) used_after_finish("Sha256::finish");
    state_->finished = true;
    Digest out{};
    sha256_digest(&state_->ctx, out.size(), out.data());
    return out;
}

Digest sha256(std::span<const std::uint8_t> data) {
    sha256_ctx ctx{};  // on the stack: every frame's MAC starts with this digest
    sha256_init(&ctx);
    sha256_update(&ctx, data.size(), data.data());
    Digest out{};
    sha256_digest(&ctx, out.size(), out.data());
    return out;
}

Digest sha256(std::string_view data) {
    return sha256(bytes_of(data));
}

// The context holds the inner and outer hashes already keyed, so copying it starts a new MAC.
struct HmacSha256::State {
    hmac_sha256_ctx ctx{};
    bool finished = false;
};

HmacSha256::HmacSha256(std::span<const std::uint8_t> key) : state_(std::make_unique<State>()) {
    hmac_sha256_set_key(&state_->ctx, key.size(), key.data());
}

HmacSha256::HmacSha256(std::string_view key) : HmacSha256(bytes_of(key)) {}
HmacSha256::HmacSha256(std::unique_ptr<State> state) : state_(std::move(state)) {}
HmacSha256::~HmacSha256() = default;
HmacSha256::HmacSha256(HmacSha256&&) noexcept = default;
HmacSha256& HmacSha256::operator=(HmacSha256&&) noexcept = default;

void HmacSha256::update(std::span<const std::uint8_t> data) {
    if (state_->finished) used_after_finish("HmacSha256::update");
    hmac_sha256_update(&state_->ctx, data.size(), data.data());
}

void HmacSha256::update(std::string_view data) {
    update(bytes_of(data));
}

Digest HmacSha256::finish() {
    if (state_->finished) used_after_finish("HmacSha256::finish");
    state_->finished = true;
    Digest out{};
    hmac_sha256_digest(&state_->ctx, out.size(), out.data());
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
    hmac_sha256_ctx ctx = keyed_.state_->ctx;
    for (const std::span<const std::uint8_t> part : parts)
        hmac_sha256_update(&ctx, part.size(), part.data());
    Digest out{};
    hmac_sha256_digest(&ctx, out.size(), out.data());
    return out;
}

Digest hmac_sha256(std::string_view key, std::span<const std::uint8_t> data) {
    HmacSha256 h(key);
    h.update(data);
    return h.finish();
}

bool constant_time_equal(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) {
    if (a.size() != b.size()) return false;
    return a.empty() || memeql_sec(a.data(), b.data(), a.size()) != 0;
}

}  // namespace sddp

// SPDX-License-Identifier: Apache-2.0
#include "os/hmac_sha256.hpp"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#if OPENSSL_VERSION_NUMBER >= 0x30000000L
#include <openssl/core_names.h>
#include <openssl/params.h>
#else
#include <openssl/hmac.h>
#endif

namespace sddp {
namespace {

std::span<const std::uint8_t> as_bytes(std::string_view s) {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// libcrypto fails these calls only when it cannot allocate or is broken. The interface returns
// plain digests, and going on would compare two failed MACs as equal, so stop the process.
[[noreturn]] void crypto_failed(const char* what) {
    char reason[256] = "no OpenSSL error queued";
    if (const unsigned long e = ERR_get_error(); e != 0)
        ERR_error_string_n(e, reason, sizeof reason);
    std::fprintf(stderr, "slurm-ddp: OpenSSL %s failed (%s)\n", what, reason);
    std::abort();
}

void check(int ok, const char* what) {
    if (ok != 1) crypto_failed(what);
}

#if OPENSSL_VERSION_NUMBER >= 0x30000000L
// Explicit fetches, once per process: the implicit ones behind EVP_sha256() and a digest name
// look the algorithm up again on every init.
const EVP_MD* sha256_md() {
    static EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    if (md == nullptr) crypto_failed("EVP_MD_fetch(SHA256)");
    return md;
}

EVP_MAC* hmac_mac() {
    static EVP_MAC* const mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
    if (mac == nullptr) crypto_failed("EVP_MAC_fetch(HMAC)");
    return mac;
}
#else
const EVP_MD* sha256_md() {
    return EVP_sha256();
}
#endif

}  // namespace

struct Sha256::State {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    ~State() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256() : state_(std::make_unique<State>()) {
    if (state_->ctx == nullptr) crypto_failed("EVP_MD_CTX_new");
    check(EVP_DigestInit_ex(state_->ctx, sha256_md(), nullptr), "EVP_DigestInit_ex");
}

Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(std::span<const std::uint8_t> data) {
    check(EVP_DigestUpdate(state_->ctx, data.data(), data.size()), "EVP_DigestUpdate");
}

void Sha256::update(std::string_view data) {
    update(as_bytes(data));
}

Digest Sha256::finish() {
    Digest out{};
    unsigned int len = 0;
    check(EVP_DigestFinal_ex(state_->ctx, out.data(), &len), "EVP_DigestFinal_ex");
    if (len != out.size()) crypto_failed("EVP_DigestFinal_ex length");
    return out;
}

Digest sha256(std::span<const std::uint8_t> data) {
    Sha256 h;
    h.update(data);
    return h.finish();
}

Digest sha256(std::string_view data) {
    return sha256(as_bytes(data));
}

#if OPENSSL_VERSION_NUMBER >= 0x30000000L
struct HmacSha256::State {
    EVP_MAC_CTX* ctx = EVP_MAC_CTX_new(hmac_mac());
    ~State() { EVP_MAC_CTX_free(ctx); }
};

HmacSha256::HmacSha256(std::span<const std::uint8_t> key) : state_(std::make_unique<State>()) {
    if (state_->ctx == nullptr) crypto_failed("EVP_MAC_CTX_new");
    char digest[] = "SHA256";
    const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", digest, 0),
                                 OSSL_PARAM_construct_end()};
    // A null key means "keep the previous one" to EVP_MAC_init; an empty key is a valid key.
    static const std::uint8_t kEmpty = 0;
    check(EVP_MAC_init(state_->ctx, key.empty() ? &kEmpty : key.data(), key.size(), params),
          "EVP_MAC_init(HMAC-SHA256)");
}

void HmacSha256::update(std::span<const std::uint8_t> data) {
    check(EVP_MAC_update(state_->ctx, data.data(), data.size()), "EVP_MAC_update");
}

Digest HmacSha256::finish() {
    Digest out{};
    std::size_t len = 0;
    check(EVP_MAC_final(state_->ctx, out.data(), &len, out.size()), "EVP_MAC_final");
    if (len != out.size()) crypto_failed("EVP_MAC_final length");
    return out;
}
#else
// OpenSSL 1.1 (EL8): HMAC_CTX, deprecated only from 3.0 on.
struct HmacSha256::State {
    HMAC_CTX* ctx = HMAC_CTX_new();
    ~State() { HMAC_CTX_free(ctx); }
};

HmacSha256::HmacSha256(std::span<const std::uint8_t> key) : state_(std::make_unique<State>()) {
    if (state_->ctx == nullptr) crypto_failed("HMAC_CTX_new");
    static const std::uint8_t kEmpty = 0;
    check(HMAC_Init_ex(state_->ctx, key.empty() ? &kEmpty : key.data(),
                       static_cast<int>(key.size()), sha256_md(), nullptr),
          "HMAC_Init_ex");
}

void HmacSha256::update(std::span<const std::uint8_t> data) {
    check(HMAC_Update(state_->ctx, data.data(), data.size()), "HMAC_Update");
}

Digest HmacSha256::finish() {
    Digest out{};
    unsigned int len = 0;
    check(HMAC_Final(state_->ctx, out.data(), &len), "HMAC_Final");
    if (len != out.size()) crypto_failed("HMAC_Final length");
    return out;
}
#endif

HmacSha256::HmacSha256(std::string_view key) : HmacSha256(as_bytes(key)) {}
HmacSha256::~HmacSha256() = default;
HmacSha256::HmacSha256(HmacSha256&&) noexcept = default;
HmacSha256& HmacSha256::operator=(HmacSha256&&) noexcept = default;

void HmacSha256::update(std::string_view data) {
    update(as_bytes(data));
}

Digest hmac_sha256(std::string_view key, std::span<const std::uint8_t> data) {
    HmacSha256 h(key);
    h.update(data);
    return h.finish();
}

bool constant_time_equal(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) {
    if (a.size() != b.size()) return false;
    return a.empty() || CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace sddp

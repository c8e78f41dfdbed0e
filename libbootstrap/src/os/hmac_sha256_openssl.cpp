// SPDX-License-Identifier: Apache-2.0
// os/hmac_sha256.hpp over OpenSSL's libcrypto: the FIPS-capable build (SDDP_CRYPTO=openssl).
#include "os/hmac_sha256.hpp"

#include <openssl/opensslv.h>

// OpenSSL 3 has EVP_MAC, and deprecates HMAC_CTX; OpenSSL 1.1.1 (RHEL 8) has only HMAC_CTX. The
// build can ask for the 1.1.1 code on OpenSSL 3 (SDDP_OPENSSL_1_1_API, with the 3.0 deprecation
// warnings silenced by OPENSSL_SUPPRESS_DEPRECATED), so that the RFC 4231 tests run the code
// RHEL 8 compiles on a machine that has no OpenSSL 1.1.1.
#if OPENSSL_VERSION_NUMBER >= 0x30000000L && !defined(SDDP_OPENSSL_1_1_API)
#define SDDP_EVP_MAC 1
#else
#define SDDP_EVP_MAC 0
#endif

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <system_error>

#if SDDP_EVP_MAC
#include <openssl/params.h>
#else
#include <openssl/hmac.h>
#endif

#include "core/base/bytes.hpp"

namespace sddp {
namespace {

// libcrypto fails these calls only when it cannot allocate or is broken. The interface returns
// plain digests, and going on would compare two failed MACs as equal, so stop the process.
[[noreturn]] void crypto_failed(const char* what) {
    char reason[256] = "no OpenSSL error queued";
    if (const unsigned long e = ERR_get_error(); e != 0)
        ERR_error_string_n(e, reason, sizeof reason);
    (void)std::fprintf(stderr, "slurm-ddp: OpenSSL %s failed (%s)\n", what, reason);
    std::abort();
}

void check(int ok, const char* what) {
    if (ok != 1) crypto_failed(what);
}

// The algorithms, looked up once per process: the implicit fetches behind EVP_sha256() and a
// digest name look them up again on every init. The first lookup is what sets libcrypto up
// (config file, providers), which is why CryptoWarmup runs it.
struct Algorithms {
    const EVP_MD* sha256 = nullptr;
#if SDDP_EVP_MAC
    EVP_MAC* hmac = nullptr;
#endif
};

Algorithms fetch_algorithms() {
    Algorithms a;
#if SDDP_EVP_MAC
    a.sha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    if (a.sha256 == nullptr) crypto_failed("EVP_MD_fetch(SHA256)");
    a.hmac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
    if (a.hmac == nullptr) crypto_failed("EVP_MAC_fetch(HMAC)");
#else
    a.sha256 = EVP_sha256();
    if (a.sha256 == nullptr) crypto_failed("EVP_sha256");
#endif
    return a;
}

struct Loader {
    std::once_flag once;
    Algorithms algorithms;
    std::atomic<bool> ready{false};
    std::mutex mu;         // guards started
    bool started = false;  // a warm-up thread was started (at most one per process)
};

// Never destroyed: a static destructor could run after libcrypto's own atexit clean-up.
Loader& loader() {
    static Loader* const l = new Loader;
    return *l;
}

// std::call_once makes a second caller wait while the first (the warm-up thread) is inside.
const Algorithms& algorithms() {
    Loader& l = loader();
    std::call_once(l.once, [&l] {
        l.algorithms = fetch_algorithms();
        l.ready.store(true, std::memory_order_release);
    });
    return l.algorithms;
}

}  // namespace

std::string crypto_library() {
    return OpenSSL_version(OPENSSL_VERSION);
}

bool crypto_ready() {
    return loader().ready.load(std::memory_order_acquire);
}

CryptoWarmup::~CryptoWarmup() {
    if (worker_.joinable()) worker_.join();
}

CryptoWarmup start_crypto_warmup() {
    CryptoWarmup w;
    Loader& l = loader();
    std::lock_guard<std::mutex> lock(l.mu);
    if (l.started) return w;
    try {
        w.worker_ = std::thread([] { algorithms(); });
        l.started = true;
    } catch (const std::system_error&) {
        // No thread (EAGAIN under a thread limit): the first hash or MAC sets libcrypto up.
    }
    return w;
}

struct Sha256::State {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    ~State() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256() : state_(std::make_unique<State>()) {
    if (state_->ctx == nullptr) crypto_failed("EVP_MD_CTX_new");
    check(EVP_DigestInit_ex(state_->ctx, algorithms().sha256, nullptr), "EVP_DigestInit_ex");
}

Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(std::span<const std::uint8_t> data) {
    check(EVP_DigestUpdate(state_->ctx, data.data(), data.size()), "EVP_DigestUpdate");
}

void Sha256::update(std::string_view data) {
    update(bytes_of(data));
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
    return sha256(bytes_of(data));
}

#if SDDP_EVP_MAC
struct HmacSha256::State {
    EVP_MAC_CTX* ctx = nullptr;
    ~State() { EVP_MAC_CTX_free(ctx); }
};

HmacSha256::HmacSha256(std::span<const std::uint8_t> key) : state_(std::make_unique<State>()) {
    state_->ctx = EVP_MAC_CTX_new(algorithms().hmac);
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
// OpenSSL 1.1.1 (RHEL 8): HMAC_CTX, deprecated from 3.0 on.
struct HmacSha256::State {
    HMAC_CTX* ctx = HMAC_CTX_new();
    ~State() { HMAC_CTX_free(ctx); }
};

HmacSha256::HmacSha256(std::span<const std::uint8_t> key) : state_(std::make_unique<State>()) {
    if (state_->ctx == nullptr) crypto_failed("HMAC_CTX_new");
    static const std::uint8_t kEmpty = 0;
    check(HMAC_Init_ex(state_->ctx, key.empty() ? &kEmpty : key.data(),
                       static_cast<int>(key.size()), algorithms().sha256, nullptr),
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

HmacSha256::HmacSha256(std::string_view key) : HmacSha256(bytes_of(key)) {}
HmacSha256::HmacSha256(std::unique_ptr<State> state) : state_(std::move(state)) {}
HmacSha256::~HmacSha256() = default;
HmacSha256::HmacSha256(HmacSha256&&) noexcept = default;
HmacSha256& HmacSha256::operator=(HmacSha256&&) noexcept = default;

void HmacSha256::update(std::string_view data) {
    update(bytes_of(data));
}

HmacKey::HmacKey(std::span<const std::uint8_t> key) : keyed_(key) {}
HmacKey::HmacKey(std::string_view key) : keyed_(key) {}
HmacKey::~HmacKey() = default;
HmacKey::HmacKey(HmacKey&&) noexcept = default;
HmacKey& HmacKey::operator=(HmacKey&&) noexcept = default;

HmacSha256 HmacKey::start() const {
    auto copy = std::make_unique<HmacSha256::State>();
#if SDDP_EVP_MAC
    copy->ctx = EVP_MAC_CTX_dup(keyed_.state_->ctx);
    if (copy->ctx == nullptr) crypto_failed("EVP_MAC_CTX_dup");
#else
    if (copy->ctx == nullptr) crypto_failed("HMAC_CTX_new");
    check(HMAC_CTX_copy(copy->ctx, keyed_.state_->ctx), "HMAC_CTX_copy");
#endif
    return HmacSha256(std::move(copy));
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
    return a.empty() || CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace sddp

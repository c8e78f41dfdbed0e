#include "core/hmac_sha256.hpp"

#include <algorithm>
#include <cstring>

namespace sddp {
namespace {

constexpr std::array<std::uint32_t, 64> kRoundConstants = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

constexpr std::uint32_t rotr(std::uint32_t x, int n) {
    return (x >> n) | (x << (32 - n));
}

std::span<const std::uint8_t> as_bytes(std::string_view s) {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

}  // namespace

Sha256::Sha256()
    : state_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
             0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19} {}

void Sha256::compress(const std::uint8_t* block) {
    std::array<std::uint32_t, 64> w{};
    for (int i = 0; i < 16; ++i) {
        w[i] = (std::uint32_t{block[4 * i]} << 24) | (std::uint32_t{block[4 * i + 1]} << 16) |
               (std::uint32_t{block[4 * i + 2]} << 8) | std::uint32_t{block[4 * i + 3]};
    }
    for (int i = 16; i < 64; ++i) {
        const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    std::uint32_t a = state_[0], b = state_[1], c = state_[2], d = state_[3];
    std::uint32_t e = state_[4], f = state_[5], g = state_[6], h = state_[7];
    for (int i = 0; i < 64; ++i) {
        const std::uint32_t s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
        const std::uint32_t ch = (e & f) ^ (~e & g);
        const std::uint32_t t1 = h + s1 + ch + kRoundConstants[i] + w[i];
        const std::uint32_t s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
        const std::uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
        const std::uint32_t t2 = s0 + maj;
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    state_[0] += a;
    state_[1] += b;
    state_[2] += c;
    state_[3] += d;
    state_[4] += e;
    state_[5] += f;
    state_[6] += g;
    state_[7] += h;
}

void Sha256::update(std::span<const std::uint8_t> data) {
    total_len_ += data.size();
    std::size_t i = 0;
    if (block_len_ > 0) {
        const std::size_t take = std::min(data.size(), block_.size() - block_len_);
        std::memcpy(block_.data() + block_len_, data.data(), take);
        block_len_ += take;
        i = take;
        if (block_len_ < block_.size()) return;
        compress(block_.data());
        block_len_ = 0;
    }
    for (; i + 64 <= data.size(); i += 64) compress(data.data() + i);
    if (i < data.size()) {
        block_len_ = data.size() - i;
        std::memcpy(block_.data(), data.data() + i, block_len_);
    }
}

void Sha256::update(std::string_view data) {
    update(as_bytes(data));
}

Digest Sha256::finish() {
    const std::uint64_t bit_len = total_len_ * 8;
    // Padding: 0x80, zeros up to 56 mod 64, then the big-endian bit length.
    std::array<std::uint8_t, 72> pad{};
    pad[0] = 0x80;
    const std::size_t pad_len = (block_len_ < 56) ? (56 - block_len_) : (120 - block_len_);
    for (int i = 0; i < 8; ++i)
        pad[pad_len + i] = static_cast<std::uint8_t>(bit_len >> (56 - 8 * i));
    const std::uint64_t saved = total_len_;
    update(std::span<const std::uint8_t>(pad.data(), pad_len + 8));
    total_len_ = saved;
    Digest out{};
    for (int i = 0; i < 8; ++i) {
        out[4 * i] = static_cast<std::uint8_t>(state_[i] >> 24);
        out[4 * i + 1] = static_cast<std::uint8_t>(state_[i] >> 16);
        out[4 * i + 2] = static_cast<std::uint8_t>(state_[i] >> 8);
        out[4 * i + 3] = static_cast<std::uint8_t>(state_[i]);
    }
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

HmacSha256::HmacSha256(std::span<const std::uint8_t> key) {
    std::array<std::uint8_t, 64> k{};
    if (key.size() > k.size()) {
        const Digest d = sha256(key);
        std::memcpy(k.data(), d.data(), d.size());
    } else if (!key.empty()) {
        std::memcpy(k.data(), key.data(), key.size());
    }
    std::array<std::uint8_t, 64> inner_key{};
    for (std::size_t i = 0; i < k.size(); ++i) {
        inner_key[i] = k[i] ^ 0x36;
        outer_key_[i] = k[i] ^ 0x5c;
    }
    inner_.update(inner_key);
}

HmacSha256::HmacSha256(std::string_view key) : HmacSha256(as_bytes(key)) {}

Digest HmacSha256::finish() {
    const Digest inner = inner_.finish();
    Sha256 outer;
    outer.update(outer_key_);
    outer.update(inner);
    return outer.finish();
}

Digest hmac_sha256(std::string_view key, std::span<const std::uint8_t> data) {
    HmacSha256 h(key);
    h.update(data);
    return h.finish();
}

bool constant_time_equal(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) {
    if (a.size() != b.size()) return false;
    // volatile keeps the compiler from turning the loop back into an early-exit memcmp.
    volatile std::uint8_t diff = 0;
    for (std::size_t i = 0; i < a.size(); ++i) diff = diff | (a[i] ^ b[i]);
    return diff == 0;
}

}  // namespace sddp

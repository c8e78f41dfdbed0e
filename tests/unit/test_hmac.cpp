// SPDX-License-Identifier: Apache-2.0
// SHA-256 against FIPS 180-2 examples, HMAC-SHA256 against RFC 4231, and the helpers. The same
// file is built against each library the build has (tests/CMakeLists.txt): Nettle, OpenSSL 3's
// EVP_MAC and the OpenSSL 1.1.1 code.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/base/bytes.hpp"
#include "os/hmac_sha256.hpp"

namespace sddp {
namespace {

std::string hex(const Digest& d) {
    return to_hex(d);
}

std::string unhex(const std::string& h) {
    std::string out;
    for (std::size_t i = 0; i + 1 < h.size(); i += 2) {
        out.push_back(static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16)));
    }
    return out;
}

std::span<const std::uint8_t> bytes(const std::string& s) {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

TEST(Sha256, FipsVectors) {
    EXPECT_EQ(hex(sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(hex(sha256("abc")),
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    EXPECT_EQ(hex(sha256("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnop"
                         "jklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu")),
              "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

TEST(Sha256, MillionAsInUnevenChunks) {
    Sha256 h;
    const std::string chunk(997, 'a');
    std::size_t left = 1000000;
    while (left > 0) {
        const std::size_t n = std::min(left, chunk.size());
        h.update(std::string_view(chunk.data(), n));
        left -= n;
    }
    EXPECT_EQ(hex(h.finish()), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PaddingBoundaries) {
    // Lengths around the 55/56/64-byte padding edges must agree between one-shot and split.
    for (std::size_t len : {55u, 56u, 63u, 64u, 65u, 119u, 120u, 128u}) {
        const std::string msg(len, 'x');
        Sha256 h;
        h.update(std::string_view(msg).substr(0, len / 3));
        h.update(std::string_view(msg).substr(len / 3));
        EXPECT_EQ(hex(h.finish()), hex(sha256(msg))) << len;
    }
}

struct HmacCase {
    std::string key, data, mac_hex;
};

std::vector<HmacCase> rfc4231_cases() {
    const std::string long_key(131, '\xaa');
    return {
        {std::string(20, '\x0b'), "Hi There",
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
        {"Jefe", "what do ya want for nothing?",
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
        {std::string(20, '\xaa'), std::string(50, '\xdd'),
         "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
        {unhex("0102030405060708090a0b0c0d0e0f10111213141516171819"), std::string(50, '\xcd'),
         "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
        {long_key, "Test Using Larger Than Block-Size Key - Hash Key First",
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
        {long_key,
         "This is a test using a larger than block-size key and a larger than block-size data. "
         "The key needs to be hashed before being used by the HMAC algorithm.",
         "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
    };
}

TEST(HmacSha256, Rfc4231) {
    for (const HmacCase& c : rfc4231_cases()) {
        EXPECT_EQ(hex(hmac_sha256(c.key, bytes(c.data))), c.mac_hex) << c.mac_hex;
    }
}

// Every MAC started from a prepared key is the key's own MAC, however many came before it and
// whatever they hashed: a started MAC must not share state with the template or with another.
TEST(HmacKey, EachStartIsAFreshMacWithTheKey) {
    for (const HmacCase& c : rfc4231_cases()) {
        const HmacKey key(bytes(c.key));
        HmacSha256 unfinished = key.start();
        unfinished.update("bytes that belong to no MAC below");
        for (int round = 0; round < 3; ++round) {
            HmacSha256 first = key.start();
            HmacSha256 second = key.start();
            second.update("interleaved");
            first.update(bytes(c.data));
            EXPECT_EQ(hex(first.finish()), c.mac_hex) << c.mac_hex << " round " << round;
            EXPECT_EQ(hex(second.finish()), hex(hmac_sha256(c.key, bytes("interleaved"))));
        }
    }
}

// mac() over parts is the MAC of their concatenation under the key, as often as it is asked,
// and leaves the key as it found it.
TEST(HmacKey, MacOfPartsIsTheMacOfTheirConcatenation) {
    for (const HmacCase& c : rfc4231_cases()) {
        const HmacKey key(bytes(c.key));
        const std::span<const std::uint8_t> all = bytes(c.data);
        const std::size_t cut = all.size() / 3;
        for (int round = 0; round < 2; ++round) {
            EXPECT_EQ(hex(key.mac({all})), c.mac_hex) << c.mac_hex;
            EXPECT_EQ(hex(key.mac({all.first(cut), {}, all.subspan(cut)})), c.mac_hex)
                << c.mac_hex << " in parts, round " << round;
        }
        HmacSha256 h = key.start();
        h.update(bytes(c.data));
        EXPECT_EQ(hex(h.finish()), c.mac_hex) << "start() after mac()";
    }
}

// The rendezvous keys the step secret, text, once; keys longer than a block (RFC 4231's 131-byte
// cases) are hashed first, as with bytes.
TEST(HmacKey, FromTextIsTheSameKeyAsFromBytes) {
    for (const HmacCase& c : rfc4231_cases()) {
        const HmacKey key{std::string_view(c.key)};
        HmacSha256 h = key.start();
        h.update(bytes(c.data));
        EXPECT_EQ(hex(h.finish()), c.mac_hex) << c.key.size() << "-byte key";
    }
}

TEST(HmacKey, EmptyKeyAndMovedKey) {
    HmacKey empty{std::span<const std::uint8_t>{}};
    EXPECT_EQ(hex(empty.start().finish()),
              "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
    HmacKey moved = std::move(empty);
    HmacSha256 h = moved.start();
    h.update("x");
    EXPECT_EQ(hex(h.finish()), hex(hmac_sha256("", bytes("x"))));
}

// start() is const, so it must be safe for several threads to start MACs from one key at once.
TEST(HmacKey, ThreadsStartingFromOneKey) {
    const HmacKey key(bytes(std::string("Jefe")));
    std::vector<std::thread> threads;
    std::atomic<int> right{0};
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&key, &right] {
            for (int i = 0; i < 200; ++i) {
                HmacSha256 h = key.start();
                h.update("what do ya want for nothing?");
                if (hex(h.finish()) ==
                    "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843") {
                    right.fetch_add(1);
                }
            }
        });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(right.load(), 4 * 200);
}

TEST(HmacSha256, Rfc4231TruncatedCase5) {
    const std::string key = unhex("0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c");
    const std::string data = "Test With Truncation";
    EXPECT_EQ(hex(hmac_sha256(key, bytes(data))).substr(0, 32), "a3b6167473100ee06e0c796c2955552b");
}

// An empty key is a valid key (all zero bytes), not "no key": libcrypto needs telling apart.
TEST(HmacSha256, EmptyKeyAndMessage) {
    EXPECT_EQ(hex(hmac_sha256("", {})),
              "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
    HmacSha256 null_key{std::span<const std::uint8_t>{}};  // data() == nullptr
    EXPECT_EQ(hex(null_key.finish()),
              "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
}

TEST(HmacSha256, MovedFromKeepsWorking) {
    HmacSha256 a(std::string_view("key"));
    a.update("The quick brown fox ");
    HmacSha256 b = std::move(a);
    b.update("jumps over the lazy dog");
    EXPECT_EQ(hex(b.finish()), "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8");
}

TEST(HmacSha256, IncrementalMatchesOneShot) {
    HmacSha256 h(std::string_view("key"));
    h.update("The quick brown fox ");
    h.update("jumps over the lazy dog");
    EXPECT_EQ(hex(h.finish()), "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8");
}

TEST(ConstantTimeEqual, ComparesContentAndLength) {
    const std::string a = "0123456789abcdef", b = "0123456789abcdef", c = "0123456789abcdeF";
    EXPECT_TRUE(constant_time_equal(bytes(a), bytes(b)));
    EXPECT_FALSE(constant_time_equal(bytes(a), bytes(c)));
    EXPECT_FALSE(constant_time_equal(bytes(a), bytes(a.substr(0, 15))));
    EXPECT_FALSE(constant_time_equal(bytes("x" + a.substr(1)), bytes(a)));
    EXPECT_TRUE(constant_time_equal({}, {}));
}

bool uses_nettle() {
    return crypto_library().starts_with("Nettle ");
}

TEST(CryptoLibrary, NamesTheLibraryAndItsVersion) {
    const std::string name = crypto_library();
    EXPECT_TRUE(name.starts_with("Nettle 3.") || name.starts_with("OpenSSL ")) << name;
}

// Nettle has no per-process set-up: the warm-up must not cost a thread.
TEST(CryptoWarmup, NettleNeedsNoThread) {
    if (!uses_nettle()) GTEST_SKIP() << crypto_library() << " has a set-up to warm";
    EXPECT_TRUE(crypto_ready());
    const CryptoWarmup w = start_crypto_warmup();
    EXPECT_FALSE(w.started());
}

// The warm-up runs libcrypto's one-time set-up on its own thread. Each case runs in a fresh
// process (the threadsafe death-test style re-executes the binary), where nothing is set up.
void warm_up_alone() {
    if (crypto_ready()) std::_Exit(2);
    {
        const CryptoWarmup w = start_crypto_warmup();
        if (!w.started()) std::_Exit(3);
        if (start_crypto_warmup().started()) std::_Exit(4);  // one thread per process
    }
    // Nothing here hashed: the warm-up thread did the set-up, and is joined.
    std::_Exit(crypto_ready() ? 0 : 5);
}

void macs_during_warm_up() {
    const CryptoWarmup w = start_crypto_warmup();
    std::vector<std::thread> users;
    std::vector<std::string> macs(4);
    for (std::size_t i = 0; i < macs.size(); ++i) {
        users.emplace_back([&macs, i] {
            macs[i] =
                to_hex(hmac_sha256("key", bytes("The quick brown fox jumps over the lazy dog")));
        });
    }
    for (auto& t : users) t.join();
    for (const auto& m : macs) {
        if (m != "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8") std::_Exit(6);
    }
    std::_Exit(0);
}

TEST(CryptoWarmup, SetsLibcryptoUpOnItsOwnThreadOnce) {
    if (uses_nettle()) GTEST_SKIP() << "Nettle has no set-up";
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(warm_up_alone(), testing::ExitedWithCode(0), "");
}

TEST(CryptoWarmup, MacsStartedMeanwhileAreRight) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(macs_during_warm_up(), testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace sddp

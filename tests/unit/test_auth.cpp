// SPDX-License-Identifier: Apache-2.0
// The handshake's proofs and session key: each is the HMAC, under the step secret, of the fields
// auth.hpp lists, in that order, strings behind their big-endian 32-bit length. Built here by
// hand into one buffer and MACed in one piece, so a change of field, order or encoding fails.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "core/base/bytes.hpp"
#include "os/hmac_sha256.hpp"
#include "rendezvous/tcp/auth.hpp"

using namespace sddp;
using namespace sddp::tcp;

namespace {

constexpr std::string_view kSecret = "0123456789abcdef0123456789abcdef";

void add(Bytes& b, std::string_view s) {
    b.insert(b.end(), s.begin(), s.end());
}
void add_str(Bytes& b, const std::string& s) {
    put_be32(b, static_cast<std::uint32_t>(s.size()));
    add(b, s);
}
void add_nonce(Bytes& b, const wire::Nonce& n) {
    b.insert(b.end(), n.begin(), n.end());
}
wire::Nonce nonce(std::uint8_t first) {
    wire::Nonce n{};
    for (std::size_t i = 0; i < n.size(); ++i) n[i] = static_cast<std::uint8_t>(first + i);
    return n;
}
wire::Mac mac_of(const Bytes& b) {
    return hmac_sha256(kSecret, b);
}

}  // namespace

TEST(Auth, ClientProofCoversEveryHelloFieldInOrder) {
    wire::Hello h;
    h.step_tag = "job.7.0";
    h.client_nonce = nonce(100);
    h.rank = 70000;
    h.world_size = 70001;
    h.local_rank = 3;
    h.local_world_size = 8;
    h.node_rank = 8750;
    h.host = "node-a17";
    const wire::Nonce server = nonce(1);
    Bytes b;
    add(b, "sddp-v1 client");
    add_str(b, h.step_tag);
    add_nonce(b, server);
    add_nonce(b, h.client_nonce);
    for (const int v : {h.rank, h.world_size, h.local_rank, h.local_world_size, h.node_rank})
        put_be32(b, static_cast<std::uint32_t>(v));
    add_str(b, h.host);
    const HmacKey key(kSecret);
    EXPECT_EQ(client_proof(key, server, h), mac_of(b));
    // Each field counts: another host, rank or nonce gives another proof.
    wire::Hello other = h;
    other.host = "node-a18";
    EXPECT_NE(client_proof(key, server, other), mac_of(b));
    other = h;
    other.rank = 70002;
    EXPECT_NE(client_proof(key, server, other), mac_of(b));
    EXPECT_NE(client_proof(key, nonce(2), h), mac_of(b));
}

TEST(Auth, ServerProofRejectProofAndSessionKeyHaveTheirOwnLabels) {
    const std::string tag = "job.7.0";
    const wire::Nonce client = nonce(100);
    const wire::Nonce server = nonce(1);
    const HmacKey key(kSecret);

    Bytes s;
    add(s, "sddp-v1 server");
    add_str(s, tag);
    add_nonce(s, client);
    add_nonce(s, server);
    put_be32(s, 5);
    put_be32(s, 0);
    add_str(s, "node-a01");
    EXPECT_EQ(server_proof(key, tag, client, server, 5, 0, "node-a01"), mac_of(s));

    Bytes r;
    add(r, "sddp-v2 reject");
    add_str(r, tag);
    add_nonce(r, client);
    add_nonce(r, server);
    add_str(r, "rank 5 is already joined");
    EXPECT_EQ(reject_proof(key, tag, client, server, "rank 5 is already joined"), mac_of(r));

    Bytes k;
    add(k, "sddp-v2 session");
    add_str(k, tag);
    add_nonce(k, client);
    add_nonce(k, server);
    EXPECT_EQ(session_key(key, tag, client, server), mac_of(k));
    // The client's nonce first and the server's second: swapped, another key.
    EXPECT_NE(session_key(key, tag, server, client), mac_of(k));
}

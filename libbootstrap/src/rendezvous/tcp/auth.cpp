// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/tcp/auth.hpp"

#include <cstdint>
#include <cstring>

#include "core/base/bytes.hpp"
#include "os/hmac_sha256.hpp"
#include "os/random_bytes.hpp"

namespace sddp::tcp {
namespace {

void put_u32(HmacSha256& h, std::uint32_t v) {
    h.update(be32(v));
}

// Length-prefixed so that ("ab", "c") and ("a", "bc") hash differently.
void put_str(HmacSha256& h, const std::string& s) {
    put_u32(h, static_cast<std::uint32_t>(s.size()));
    h.update(s);
}

}  // namespace

Result<wire::Nonce> make_nonce() {
    SDDP_TRY(raw, random_bytes(wire::kNonceSize));
    wire::Nonce n{};
    std::memcpy(n.data(), raw.data(), n.size());
    return n;
}

wire::Mac client_proof(const HmacKey& secret, const wire::Nonce& server_nonce,
                       const wire::Hello& hello) {
    HmacSha256 h = secret.start();
    h.update("sddp-v1 client");
    put_str(h, hello.step_tag);
    h.update(server_nonce);
    h.update(hello.client_nonce);
    put_u32(h, static_cast<std::uint32_t>(hello.rank));
    put_u32(h, static_cast<std::uint32_t>(hello.world_size));
    put_u32(h, static_cast<std::uint32_t>(hello.local_rank));
    put_u32(h, static_cast<std::uint32_t>(hello.local_world_size));
    put_u32(h, static_cast<std::uint32_t>(hello.node_rank));
    put_str(h, hello.host);
    return h.finish();
}

wire::Mac server_proof(const HmacKey& secret, const std::string& step_tag,
                       const wire::Nonce& client_nonce, const wire::Nonce& server_nonce,
                       std::int32_t client_rank, std::int32_t server_rank,
                       const std::string& server_host) {
    HmacSha256 h = secret.start();
    h.update("sddp-v1 server");
    put_str(h, step_tag);
    h.update(client_nonce);
    h.update(server_nonce);
    put_u32(h, static_cast<std::uint32_t>(client_rank));
    put_u32(h, static_cast<std::uint32_t>(server_rank));
    put_str(h, server_host);
    return h.finish();
}

wire::Mac reject_proof(const HmacKey& secret, const std::string& step_tag,
                       const wire::Nonce& client_nonce, const wire::Nonce& server_nonce,
                       const std::string& reason) {
    HmacSha256 h = secret.start();
    h.update("sddp-v2 reject");
    put_str(h, step_tag);
    h.update(client_nonce);
    h.update(server_nonce);
    put_str(h, reason);
    return h.finish();
}

wire::Mac session_key(const HmacKey& secret, const std::string& step_tag,
                      const wire::Nonce& client_nonce, const wire::Nonce& server_nonce) {
    HmacSha256 h = secret.start();
    h.update("sddp-v2 session");
    put_str(h, step_tag);
    h.update(client_nonce);
    h.update(server_nonce);
    return h.finish();
}

std::string local_socket_name(const RendezvousConfig& cfg) {
    Sha256 h;
    h.update("sddp-v1 local socket");
    h.update(cfg.step_tag);
    h.update(std::string_view("\0", 1));
    h.update(sha256(cfg.secret));
    h.update(std::to_string(cfg.master_port) + "/" + std::to_string(cfg.node_rank));
    h.update(std::string_view("\0", 1));
    h.update(cfg.round);
    const Digest d = h.finish();
    return "sddp-" + to_hex(std::span<const std::uint8_t>(d.data(), 16));
}

}  // namespace sddp::tcp

// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/tcp/auth.hpp"

#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "core/base/bytes.hpp"
#include "os/hmac_sha256.hpp"
#include "os/random_bytes.hpp"

namespace sddp::tcp {
namespace {

std::array<std::uint8_t, 4> u32(std::int32_t v) {
    return be32(static_cast<std::uint32_t>(v));
}

// A string's length goes before it, so that ("ab", "c") and ("a", "bc") hash differently.
std::array<std::uint8_t, 4> length_of(const std::string& s) {
    return be32(static_cast<std::uint32_t>(s.size()));
}

}  // namespace

Result<wire::Nonce> make_nonce() {
    SDDP_TRY(raw, random_bytes(wire::kNonceSize));
    wire::Nonce n{};
    std::memcpy(n.data(), raw.data(), n.size());
    return n;
}

// Each proof is one HmacKey::mac over its fields in order: no MAC context on the heap, and a
// handshake makes three or four of them on each side.
wire::Mac client_proof(const HmacKey& secret, const wire::Nonce& server_nonce,
                       const wire::Hello& hello) {
    const auto tag_len = length_of(hello.step_tag);
    const auto host_len = length_of(hello.host);
    const auto rank = u32(hello.rank);
    const auto world = u32(hello.world_size);
    const auto local_rank = u32(hello.local_rank);
    const auto local_world = u32(hello.local_world_size);
    const auto node_rank = u32(hello.node_rank);
    return secret.mac({bytes_of("sddp-v1 client"), tag_len, bytes_of(hello.step_tag), server_nonce,
                       hello.client_nonce, rank, world, local_rank, local_world, node_rank,
                       host_len, bytes_of(hello.host)});
}

wire::Mac server_proof(const HmacKey& secret, const std::string& step_tag,
                       const wire::Nonce& client_nonce, const wire::Nonce& server_nonce,
                       std::int32_t client_rank, std::int32_t server_rank,
                       const std::string& server_host) {
    const auto tag_len = length_of(step_tag);
    const auto host_len = length_of(server_host);
    const auto client = u32(client_rank);
    const auto server = u32(server_rank);
    return secret.mac({bytes_of("sddp-v1 server"), tag_len, bytes_of(step_tag), client_nonce,
                       server_nonce, client, server, host_len, bytes_of(server_host)});
}

wire::Mac reject_proof(const HmacKey& secret, const std::string& step_tag,
                       const wire::Nonce& client_nonce, const wire::Nonce& server_nonce,
                       const std::string& reason) {
    const auto tag_len = length_of(step_tag);
    const auto reason_len = length_of(reason);
    return secret.mac({bytes_of("sddp-v2 reject"), tag_len, bytes_of(step_tag), client_nonce,
                       server_nonce, reason_len, bytes_of(reason)});
}

wire::Mac session_key(const HmacKey& secret, const std::string& step_tag,
                      const wire::Nonce& client_nonce, const wire::Nonce& server_nonce) {
    const auto tag_len = length_of(step_tag);
    return secret.mac(
        {bytes_of("sddp-v2 session"), tag_len, bytes_of(step_tag), client_nonce, server_nonce});
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

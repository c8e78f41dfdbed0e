// SPDX-License-Identifier: Apache-2.0
// The rendezvous handshake's cryptography: nonces, the two proofs, the local socket name.
//
// Mutual challenge-response with the per-step secret, which never crosses the wire:
//   server -> client  challenge: server_nonce (32 random bytes)
//   client -> server  hello: identity, client_nonce,
//                     HMAC(secret, "sddp-v1 client" | step_tag | server_nonce | client_nonce |
//                          rank | world_size | local_rank | local_world_size | node_rank | host)
//   server -> client  welcome: server rank and host,
//                     HMAC(secret, "sddp-v1 server" | step_tag | client_nonce | server_nonce |
//                          client rank | server rank | server host)
//   server -> client  or reject: reason,
//                     HMAC(secret, "sddp-v2 reject" | step_tag | client_nonce | server_nonce |
//                          reason)
// Both nonces are fresh per connection, so a recorded hello or welcome cannot be replayed, and
// the distinct labels keep one side's proof from being reflected as the other's. A client acts on
// a reject only when its proof verifies, and on an abort only after the welcome (sealed):
// anything else may come from a process squatting on the port, and the client keeps trying to
// the deadline.
//
// After the welcome every frame, both ways, is followed by
//   HMAC(session key, direction | sequence number | SHA-256(frame))
// with session key = HMAC(secret, "sddp-v2 session" | step_tag | client_nonce | server_nonce),
// so a relay on the path can neither alter, drop, reorder nor replay a frame (the NCCL id, say).
// The frame's hash is computed once however many children receive it.
#pragma once

#include <cstdint>
#include <string>

#include "core/base/result.hpp"
#include "os/hmac_sha256.hpp"
#include "rendezvous/protocol/wire.hpp"
#include "rendezvous/transport.hpp"

namespace sddp::tcp {

Result<wire::Nonce> make_nonce();

// The proofs and the session key below take the step secret keyed once per rendezvous
// (HmacKey(cfg.secret)): a handshake then costs its messages' compressions only, not two more
// per MAC to set the key up again.

// The step tag as the hello carries it and every proof covers it: cut to the wire's limit.
inline std::string wire_tag(const RendezvousConfig& cfg) {
    return cfg.step_tag.substr(0, wire::kMaxTagSize);
}

wire::Mac client_proof(const HmacKey& secret, const wire::Nonce& server_nonce,
                       const wire::Hello& hello);

// `server_host` as the welcome carries it: the client names its parent by it in every error, so
// a relay must not be able to change it.
wire::Mac server_proof(const HmacKey& secret, const std::string& step_tag,
                       const wire::Nonce& client_nonce, const wire::Nonce& server_nonce,
                       std::int32_t client_rank, std::int32_t server_rank,
                       const std::string& server_host);

// Name of a node leader's abstract Unix socket. Derived from the step tag, a hash of the
// secret, the master port, the node rank and the rendezvous round, so concurrent steps (and, in
// tests, several "nodes" on one host) never collide and outsiders cannot predict it to squat on
// it. Both ends also check who is at the other end (foreign_local_peer in socket.hpp).
std::string local_socket_name(const RendezvousConfig& cfg);

wire::Mac reject_proof(const HmacKey& secret, const std::string& step_tag,
                       const wire::Nonce& client_nonce, const wire::Nonce& server_nonce,
                       const std::string& reason);

wire::Mac session_key(const HmacKey& secret, const std::string& step_tag,
                      const wire::Nonce& client_nonce, const wire::Nonce& server_nonce);

}  // namespace sddp::tcp

// SPDX-License-Identifier: Apache-2.0
#include "api/bootstrap.hpp"

#include <unistd.h>

#include <cstdint>
#include <mutex>

#include "api/debug_stacks.hpp"
#include "api/last_error.hpp"
#include "api/master_precheck.hpp"
#include "core/base/log.hpp"
#include "core/contract/contract.hpp"
#include "core/gpu/device_choice.hpp"
#include "core/gpu/gpu_binding.hpp"
#include "os/hmac_sha256.hpp"
#include "os/host_files.hpp"
#include "os/host_name.hpp"
#include "rendezvous/preflight_exchange.hpp"
#include "rendezvous/protocol/leader_tree.hpp"
#include "rendezvous/protocol/preflight.hpp"
#include "rendezvous/select_transport.hpp"
#include "rendezvous/self_transport.hpp"

namespace sddp::api {
namespace {

std::string host_name() {
    const auto name = local_host_name();
    return name && !name->empty() ? *name : "unknown-host";
}

std::string prefix(const sddp_handle& h, std::string_view step) {
    return "slurm-ddp: " + h.where() + ": " + std::string(step) + ": ";
}

// Reports a failure. A local failure after the transport exists is sent to the peers (TCP
// forwards the reason to every rank) so that they fail with it now instead of at their
// deadline; a verdict every rank reaches by itself from the same records (preflight) is not.
enum class Tell { peers, nobody };
int fail_step(sddp_handle& h, Phase phase, std::string_view step, const Error& e,
              Tell tell = Tell::peers) {
    const std::string message = prefix(h, step) + e.message;
    if (h.transport && tell == Tell::peers) h.transport->abort(message);
    return set_last_error(status_for(phase, e.code), message);
}

RendezvousConfig rendezvous_config(const sddp_handle& h) {
    const Identity& id = h.id;
    RendezvousConfig c;
    c.rank = static_cast<int>(id.rank);
    c.world_size = static_cast<int>(id.world_size);
    // The two-level TCP tree needs to know who shares a node; without that, connect directly.
    if (id.locality_known && id.node_rank) {
        c.local_rank = static_cast<int>(id.local_rank);
        c.local_world_size = static_cast<int>(id.local_world_size);
        c.node_rank = static_cast<int>(*id.node_rank);
    } else {
        c.local_rank = 0;
        c.local_world_size = 1;
        c.node_rank = c.rank;
    }
    c.master_addr = id.master_addr.value_or("");
    c.master_port = id.master_port.value_or(0);
    c.secret = id.secret;
    c.step_tag = id.step_tag;
    c.host = h.host;
    c.timeout = h.timeout;
    return c;
}

// The TCP leaders' tree needs every node's host in node-rank order; leader_hosts gives it only
// when node ranks are Slurm's own, so every rank of the step takes the same shape.
Status add_leader_tree(RendezvousConfig& c, const sddp_handle& h, const EnvLookup& env) {
    SDDP_TRY(fanout, read_tree_fanout(env));
    c.tree_fanout = fanout;
    if (c.master_port == 0) return ok_status();
    auto hosts = leader_hosts(env, h.id, c.master_addr);
    if (!hosts || c.node_rank >= static_cast<int>(hosts->size())) return ok_status();
    for (std::string& host : *hosts) c.leaders.push_back({std::move(host), c.master_port});
    return ok_status();
}

void warn_unauthenticated(const sddp_handle& h) {
    if (h.id.rank != 0 || h.transport_name != "tcp" || !h.id.secret.empty()) return;
    log(LogLevel::warn,
        std::string(contract::kSecretVar) + " is not set and unauthenticated TCP was allowed (" +
            contract::kAllowUnauthenticatedVar + "), so the rendezvous on port " +
            std::to_string(h.id.master_port.value_or(0)) +
            " is unauthenticated (any process that reaches it can join); srun --ddp sets a "
            "per-step secret");
}

// Bare RANK/WORLD_SIZE say nothing about who shares a host; the host names do.
Status derive_locality_from_hosts(sddp_handle& h) {
    PreflightRecord r;
    r.step_tag = h.id.step_tag;
    r.world_size = h.id.world_size;
    r.rank = h.id.rank;
    r.host = h.host;
    // Only the layout is wanted here: the verdict comes from the real preflight that follows.
    SDDP_TRY(out, run_preflight(*h.transport, r, true));
    const NodeLayout& l = *out.layout;
    h.local_rank = static_cast<int>(l.local_rank[h.id.rank]);
    h.local_world_size = static_cast<int>(l.local_world_size[h.id.rank]);
    return ok_status();
}

// Whether this rank must learn its node from everyone's host names. The answer depends only on
// the kind of launcher, so every rank of a step picks the same preflight exchange.
bool needs_layout(const sddp_handle& h) {
    return !h.id.node_rank || !h.id.num_nodes || !h.id.locality_known;
}

void apply_layout(sddp_handle& h, const std::optional<NodeLayout>& layout) {
    if (!layout) {
        h.node_rank = static_cast<int>(*h.id.node_rank);
        h.num_nodes = static_cast<int>(*h.id.num_nodes);
        return;
    }
    const NodeLayout& l = *layout;
    if (h.id.node_rank) {
        h.node_rank = static_cast<int>(*h.id.node_rank);
        h.num_nodes = static_cast<int>(h.id.num_nodes.value_or(l.num_nodes));
    } else {
        h.node_rank = static_cast<int>(l.node_of_rank[h.id.rank]);
        h.num_nodes = static_cast<int>(l.num_nodes);
    }
    if (!h.id.locality_known) {
        h.local_rank = static_cast<int>(l.local_rank[h.id.rank]);
        h.local_world_size = static_cast<int>(l.local_world_size[h.id.rank]);
    }
}

bool uses_tcp(TransportChoice option, const EnvLookup& env) {
    auto choice = resolve_transport_choice(option, env);
    if (!choice) return false;  // select_transport reports the bad value
    if (*choice == TransportChoice::automatic) return auto_transport(env) == TransportChoice::tcp;
    return *choice == TransportChoice::tcp;
}

// Who this rank is, from the environment (and the host file under an arbitrary distribution).
int identify(sddp_handle& h, const Settings& s, const EnvLookup& env) {
    IdentityInputs in = gather_identity_inputs(env);
    in.master_addr = s.master_addr;
    in.master_port = s.master_port;
    auto id = detect_identity(env, in);
    if (!id) {
        return set_last_error(
            status_for(Phase::identity, id.error().code),
            "slurm-ddp: rank unknown on host " + h.host + ": identity: " + id.error().message);
    }
    h.id = std::move(*id);
    h.source = to_string(h.id.source);
    h.local_rank = static_cast<int>(h.id.local_rank);
    h.local_world_size = static_cast<int>(h.id.local_world_size);
    return SDDP_OK;
}

// The transport the ranks meet through: none to meet for one rank, else the one chosen.
int open_transport(sddp_handle& h, const Settings& s, const EnvLookup& env) {
    if (h.id.world_size == 1) {
        h.transport = make_self_transport();
    } else {
        if (uses_tcp(s.transport, env)) {
            if (auto st = check_master_address(h.id, h.host, s.timeout); !st) {
                return fail_step(h, Phase::rendezvous, "rendezvous", st.error());
            }
        }
        RendezvousConfig cfg = rendezvous_config(h);
        cfg.allow_unauthenticated = s.allow_unauthenticated;
        cfg.round = env(contract::kRendezvousRoundVar).value_or("");
        if (auto st = add_leader_tree(cfg, h, env); !st) {
            return fail_step(h, Phase::rendezvous, "rendezvous", st.error());
        }
        auto t = select_transport(s.transport, cfg, env);
        if (!t) {
            if (t.error().code == Errc::timeout) write_debug_stacks(env, h.host);
            return fail_step(h, Phase::rendezvous, "rendezvous", t.error());
        }
        h.transport = std::move(*t);
    }
    h.transport_name = std::string(h.transport->name());
    warn_unauthenticated(h);
    return SDDP_OK;
}

// With NCCL: this rank's GPU in its preflight record. A failed choice is kept in `gpu_error` and
// in the record, reported after the exchange so that every rank names the same one.
int choose_gpu(sddp_handle& h, const EnvLookup& env, PreflightRecord& mine,
               std::optional<Error>& gpu_error) {
    if (!h.id.locality_known && h.id.world_size > 1 && !h.id.device) {
        if (auto st = derive_locality_from_hosts(h); !st) {
            return fail_step(h, Phase::rendezvous, "rendezvous (" + h.transport_name + ")",
                             st.error());
        }
    }
    auto g = nccl::select_gpu(device_choice_input(h.id.device, h.local_rank, h.local_world_size,
                                                  h.id.locality_known, env));
    if (g) {
        mine.pci_bus_id = g->pci_bus_id;
        mine.cuda_device = g->device;
        h.cuda_device = g->device;
    } else {
        gpu_error = g.error();
        mine.error = g.error().message;  // shared: every rank names this one
    }
    return SDDP_OK;
}

// Every rank's record to every rank, then one verdict each reaches alone from the same records.
int exchange_preflight(sddp_handle& h, const Settings& s, const EnvLookup& env) {
    PreflightRecord mine;
    mine.step_tag = h.id.step_tag;
    mine.world_size = h.id.world_size;
    mine.rank = h.id.rank;
    mine.host = h.host;
    std::optional<Error> gpu_error;
    if (s.nccl) {
        mine.nccl_version = static_cast<std::uint32_t>(nccl::version());
        mine.nccl_options = "local=" + std::to_string(s.local_comm ? 1 : 0) +
                            " ids=" + std::to_string(s.unique_ids);
        if (const int rc = choose_gpu(h, env, mine, gpu_error); rc != SDDP_OK) return rc;
    }
    auto outcome = run_preflight(*h.transport, mine, needs_layout(h));
    if (!outcome) {
        if (outcome.error().code == Errc::timeout) write_debug_stacks(env, h.host);
        return fail_step(h, Phase::rendezvous, "preflight exchange (" + h.transport_name + ")",
                         outcome.error());
    }
    if (gpu_error) return fail_step(h, Phase::cuda, "GPU selection", *gpu_error, Tell::nobody);
    if (!outcome->verdict) {
        return fail_step(h, Phase::preflight, "preflight", outcome->verdict.error(), Tell::nobody);
    }
    apply_layout(h, outcome->layout);
    return SDDP_OK;
}

int create_comms(sddp_handle& h, const Settings& s, const EnvLookup& env) {
    nccl::CommParams p;
    p.rank = static_cast<int>(h.id.rank);
    p.world_size = static_cast<int>(h.id.world_size);
    p.node_color = h.node_rank;
    p.local_comm = s.local_comm;
    p.unique_ids = s.unique_ids;
    p.nccl_comm_id = env("NCCL_COMM_ID");
    p.nccl_comm_blocking = env("NCCL_COMM_BLOCKING");
    p.timeout = s.timeout;
    p.host = h.host;
    auto comms = nccl::create_comms(*h.transport, p);
    if (!comms) return fail_step(h, Phase::nccl, "NCCL", comms.error());
    h.comms = std::move(*comms);
    return SDDP_OK;
}

}  // namespace

int bootstrap(const Settings& s, const EnvLookup& env, std::unique_ptr<sddp_handle>& out) {
    auto h = std::make_unique<sddp_handle>();
    h->host = host_name();
    h->timeout = s.timeout;
    if (const int rc = identify(*h, s, env); rc != SDDP_OK) return rc;
    // The TCP handshake's first MAC needs libcrypto set up (~1 ms of CPU in a process new to
    // it): start that now, so that it overlaps loading NCCL and resolving MASTER_ADDR.
    const CryptoWarmup crypto_warmup =
        h->id.world_size > 1 && uses_tcp(s.transport, env) ? start_crypto_warmup() : CryptoWarmup();
    // Refuse before the rendezvous, so that every rank of a job on a node without NCCL (or
    // with one too old) fails at once, naming the library.
    if (s.nccl) {
        if (auto st = nccl::load(); !st) return fail_step(*h, Phase::nccl, "NCCL", st.error());
    }
    if (const int rc = open_transport(*h, s, env); rc != SDDP_OK) return rc;
    if (const int rc = exchange_preflight(*h, s, env); rc != SDDP_OK) return rc;
    if (s.nccl) {
        if (const int rc = create_comms(*h, s, env); rc != SDDP_OK) return rc;
    }
    out = std::move(h);
    return SDDP_OK;
}

// Both take the handle's lock, so that a collective running on another thread finishes (it
// is bounded by the timeout) before the handle is torn down; the handle is freed after the
// lock is released.
int shutdown(std::unique_ptr<sddp_handle> h) {
    int rc = SDDP_OK;
    std::unique_lock<std::mutex> lock(h->mu);
    if (h->comms) {
        if (auto st = h->comms->finalize(h->timeout); !st) {
            rc = set_last_error(status_for(Phase::nccl, st.error().code),
                                prefix(*h, "finalize") + st.error().message);
        }
        h->comms.reset();
    }
    h->transport.reset();
    lock.unlock();
    return rc;
}

void abort_handle(std::unique_ptr<sddp_handle> h, const char* reason) {
    std::unique_lock<std::mutex> lock(h->mu);
    if (h->comms) h->comms->abort();
    h->comms.reset();
    if (h->transport) {
        h->transport->abort(prefix(*h, "sddp_abort") +
                            (reason && *reason ? reason : "no reason given"));
    }
    h->transport.reset();
    lock.unlock();
}

}  // namespace sddp::api

#include "api/bootstrap.hpp"

#include "api/host_facts.hpp"
#include "api/last_error.hpp"
#include "core/contract.hpp"
#include "core/log.hpp"
#include "core/preflight.hpp"
#include "rendezvous/preflight_exchange.hpp"
#include "rendezvous/select_transport.hpp"
#include "rendezvous/self_transport.hpp"

namespace sddp::api {
namespace {

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

void warn_unauthenticated(const sddp_handle& h) {
    if (h.id.rank != 0 || h.transport_name != "tcp" || !h.id.secret.empty()) return;
    log(LogLevel::warn,
        std::string(contract::kSecretVar) + " is not set, so the TCP rendezvous on port " +
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

}  // namespace

int bootstrap(const Settings& s, const EnvLookup& env, std::unique_ptr<sddp_handle>& out) {
    auto h = std::make_unique<sddp_handle>();
    h->host = host_name();
    h->timeout = s.timeout;

    IdentityInputs in;
    in.master_addr = s.master_addr;
    in.master_port = s.master_port;
    in.ephemeral_ports = ephemeral_ports();
    in.hostfile_first_host = hostfile_first_host(env);
    auto id = detect_identity(env, in);
    if (!id) {
        return set_last_error(
            status_for(Phase::identity, id.error().code),
            "slurm-ddp: rank unknown on host " + h->host + ": identity: " + id.error().message);
    }
    h->id = std::move(*id);
    h->source = to_string(h->id.source);
    h->local_rank = static_cast<int>(h->id.local_rank);
    h->local_world_size = static_cast<int>(h->id.local_world_size);

    // Refuse before the rendezvous, so that every rank of a misbuilt job fails at once.
    if (s.nccl && !nccl::available()) {
        return fail_step(*h, Phase::nccl, "NCCL",
                         make_error(Errc::unsupported, nccl::select_gpu({}).error().message));
    }

    if (h->id.world_size == 1) {
        h->transport = make_self_transport();
    } else {
        auto t = select_transport(s.transport, rendezvous_config(*h), env);
        if (!t) return fail_step(*h, Phase::rendezvous, "rendezvous", t.error());
        h->transport = std::move(*t);
    }
    h->transport_name = std::string(h->transport->name());
    warn_unauthenticated(*h);

    PreflightRecord mine;
    mine.step_tag = h->id.step_tag;
    mine.world_size = h->id.world_size;
    mine.rank = h->id.rank;
    mine.host = h->host;
    std::optional<Error> gpu_error;
    if (s.nccl) {
        if (!h->id.locality_known && h->id.world_size > 1 && !h->id.device) {
            if (auto st = derive_locality_from_hosts(*h); !st) {
                return fail_step(*h, Phase::rendezvous, "rendezvous (" + h->transport_name + ")",
                                 st.error());
            }
        }
        nccl::GpuRequest req;
        req.ddp_device = h->id.device;
        req.local_rank = h->local_rank;
        req.locality_known = h->id.locality_known;
        req.visible_devices = env("CUDA_VISIBLE_DEVICES");
        auto g = nccl::select_gpu(req);
        if (g) {
            mine.pci_bus_id = g->pci_bus_id;
            mine.cuda_device = g->device;
            h->cuda_device = g->device;
        } else {
            gpu_error = g.error();
            mine.error = g.error().message;  // shared: every rank names this one
        }
    }

    auto outcome = run_preflight(*h->transport, mine, needs_layout(*h));
    if (!outcome) {
        return fail_step(*h, Phase::rendezvous, "preflight exchange (" + h->transport_name + ")",
                         outcome.error());
    }
    if (gpu_error) return fail_step(*h, Phase::cuda, "GPU selection", *gpu_error, Tell::nobody);
    if (!outcome->verdict) {
        return fail_step(*h, Phase::preflight, "preflight", outcome->verdict.error(), Tell::nobody);
    }
    apply_layout(*h, outcome->layout);

    if (s.nccl) {
        nccl::CommParams p;
        p.rank = static_cast<int>(h->id.rank);
        p.world_size = static_cast<int>(h->id.world_size);
        p.node_color = h->node_rank;
        p.local_comm = s.local_comm;
        p.unique_ids = s.unique_ids;
        p.timeout = s.timeout;
        auto comms = nccl::create_comms(*h->transport, p);
        if (!comms) return fail_step(*h, Phase::nccl, "NCCL", comms.error());
        h->comms = std::move(*comms);
    }
    out = std::move(h);
    return SDDP_OK;
}

int shutdown(std::unique_ptr<sddp_handle> h) {
    int rc = SDDP_OK;
    if (h->comms) {
        if (auto st = h->comms->finalize(h->timeout); !st) {
            rc = set_last_error(status_for(Phase::nccl, st.error().code),
                                prefix(*h, "finalize") + st.error().message);
        }
        h->comms.reset();
    }
    h->transport.reset();
    return rc;
}

void abort_handle(std::unique_ptr<sddp_handle> h, const char* reason) {
    if (h->comms) h->comms->abort();
    h->comms.reset();
    if (h->transport) {
        h->transport->abort(prefix(*h, "sddp_abort") +
                            (reason && *reason ? reason : "no reason given"));
    }
    h->transport.reset();
}

}  // namespace sddp::api

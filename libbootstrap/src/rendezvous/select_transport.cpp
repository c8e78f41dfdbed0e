// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/select_transport.hpp"

#include "core/base/numbers.hpp"
#include "core/contract/contract.hpp"
#include "rendezvous/kvs/pmi2_transport.hpp"
#include "rendezvous/kvs/pmix_transport.hpp"
#include "rendezvous/protocol/secret_policy.hpp"
#include "rendezvous/tcp_transport.hpp"

namespace sddp {
namespace {

Status need_master(const RendezvousConfig& cfg, std::string_view why) {
    if (!cfg.master_addr.empty() && cfg.master_port != 0) return ok_status();
    std::string missing = cfg.master_addr.empty() ? "MASTER_ADDR" : "";
    if (cfg.master_port == 0)
        missing += std::string(missing.empty() ? "" : " and ") + "MASTER_PORT";
    return make_error(Errc::missing_input,
                      "the TCP rendezvous (" + std::string(why) + ") needs " + missing +
                          " (rank 0's host and a free port) and they are not set; export them, "
                          "pass them as options, launch with srun --ddp (which sets them), or "
                          "use srun --mpi=pmi2 or --mpi=pmix for a transport without a port");
}

Result<std::unique_ptr<Transport>> tcp(const RendezvousConfig& cfg, std::string_view why,
                                       const EnvLookup& env) {
    SDDP_CHECK(need_master(cfg, why));
    SecretFacts facts;
    facts.have_secret = !cfg.secret.empty();
    facts.allow_unauthenticated = cfg.allow_unauthenticated;
    if (auto step = env(contract::kStepVar); step && !step->empty()) facts.ddp_step = *step;
    SDDP_CHECK(check_secret_policy(facts));
    return make_tcp_transport(cfg);
}

}  // namespace

Result<TransportChoice> resolve_transport_choice(TransportChoice option, const EnvLookup& env) {
    if (option != TransportChoice::automatic) return option;
    const auto v = env(contract::kTransportVar);
    if (!v || v->empty() || *v == "auto") return TransportChoice::automatic;
    if (*v == "tcp") return TransportChoice::tcp;
    if (*v == "pmi2") return TransportChoice::pmi2;
    if (*v == "pmix") return TransportChoice::pmix;
    return make_error(Errc::invalid_input, std::string(contract::kTransportVar) + "=" +
                                               quote_value(*v) +
                                               " is not a transport; use auto, tcp, pmi2 or pmix");
}

bool tcp_environment(const EnvLookup& env) {
    const auto set = [&](const char* name) {
        const auto v = env(name);
        return v && !v->empty();
    };
    const auto allow = env(contract::kAllowUnauthenticatedVar);
    return set("MASTER_ADDR") && set("MASTER_PORT") &&
           (set(contract::kSecretVar) || (allow && *allow == "1"));
}

// TCP first wherever the step gives it what it needs: on the test cluster it held the id in
// 20-90 ms at 2-16 ranks where PMI2 took 190-200 ms and PMIx 125-260 ms (bench/results/
// srun-transports-*), and on real nodes its per-rank cost runs in parallel while every PMI
// collective is a fence through slurmstepd. PMIx, the slowest (libpmix's load and PMIx_Init
// in every task), only where it is the one way the step can meet.
TransportChoice auto_transport(const EnvLookup& env) {
    if (tcp_environment(env)) return TransportChoice::tcp;
    if (pmi2_environment(env)) return TransportChoice::pmi2;
    if (pmix_environment(env)) return TransportChoice::pmix;
    return TransportChoice::tcp;
}

Result<std::unique_ptr<Transport>> select_transport(TransportChoice choice,
                                                    const RendezvousConfig& cfg,
                                                    const EnvLookup& env) {
    switch (choice) {
        case TransportChoice::tcp:
            return tcp(cfg, std::string("chosen by ") + contract::kTransportVar + " or the option",
                       env);
        case TransportChoice::pmi2:
            if (!pmi2_environment(env)) {
                return make_error(Errc::unsupported,
                                  "the PMI2 transport was requested but this task was not started "
                                  "by srun --mpi=pmi2 (PMI_FD, PMI_RANK, PMI_SIZE or SLURM_JOB_ID "
                                  "unset); launch with srun --mpi=pmi2 or use " +
                                      std::string(contract::kTransportVar) + "=tcp");
            }
            return make_pmi2_transport(cfg, env);
        case TransportChoice::pmix:
            if (!pmix_environment(env)) {
                return make_error(Errc::unsupported,
                                  "the PMIx transport was requested but this task was not started "
                                  "by srun --mpi=pmix (PMIX_RANK, PMIX_NAMESPACE or "
                                  "PMIX_SERVER_URI* unset); launch with srun --mpi=pmix or use " +
                                      std::string(contract::kTransportVar) + "=tcp");
            }
            return make_pmix_transport(cfg, env);
        case TransportChoice::automatic:
            break;
    }
    // Only a missing library falls back: any other PMI2/PMIx failure is real and reported.
    const auto fallback = [&](Result<std::unique_ptr<Transport>> t, std::string_view why) {
        if (t || t.error().code != Errc::unsupported || !need_master(cfg, "").ok()) return t;
        return tcp(cfg, why, env);
    };
    switch (auto_transport(env)) {
        case TransportChoice::pmi2:
            return fallback(make_pmi2_transport(cfg, env), "libpmi2 is not available");
        case TransportChoice::pmix:
            return fallback(make_pmix_transport(cfg, env), "libpmix is not available");
        default:
            return tcp(cfg, "no srun --mpi=pmi2 or --mpi=pmix environment", env);
    }
}

}  // namespace sddp

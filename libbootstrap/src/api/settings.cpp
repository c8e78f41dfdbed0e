// SPDX-License-Identifier: Apache-2.0
#include "api/settings.hpp"

#include "core/contract/contract.hpp"
#include "core/task/identity.hpp"
#include "rendezvous/protocol/secret_policy.hpp"

namespace sddp::api {
namespace {

Error bad(const std::string& what) {
    return make_error(Errc::invalid_input, "sddp_options: " + what);
}

}  // namespace

Result<Settings> read_settings(const sddp_options* o, const EnvLookup& env) {
    Settings s;
    sddp_options defaults;
    if (!o) {
        sddp_options_init(&defaults);
        o = &defaults;
    }
    if (o->version != SDDP_OPTIONS_VERSION) {
        return bad("version " + std::to_string(o->version) + " is not " +
                   std::to_string(SDDP_OPTIONS_VERSION) +
                   ": fill the struct with "
                   "sddp_options_init() before setting fields");
    }
    s.nccl = o->no_nccl == 0;
    TransportChoice option = TransportChoice::automatic;
    switch (o->transport) {
        case SDDP_TRANSPORT_AUTO:
            break;
        case SDDP_TRANSPORT_TCP:
            option = TransportChoice::tcp;
            break;
        case SDDP_TRANSPORT_PMI2:
            option = TransportChoice::pmi2;
            break;
        case SDDP_TRANSPORT_PMIX:
            option = TransportChoice::pmix;
            break;
        default:
            return bad("transport " + std::to_string(o->transport) +
                       " is not SDDP_TRANSPORT_AUTO (0), _TCP (1), _PMI2 (2) or _PMIX (3)");
    }
    SDDP_TRY(choice, resolve_transport_choice(option, env));
    s.transport = choice;

    if (o->timeout_ms < 0)
        return bad("timeout_ms " + std::to_string(o->timeout_ms) + " is negative");
    if (o->timeout_ms > 0) {
        s.timeout = std::chrono::milliseconds(o->timeout_ms);
    } else {
        SDDP_TRY(env_ms, read_timeout_ms(env));
        if (env_ms) s.timeout = std::chrono::milliseconds(*env_ms);
    }
    if (o->master_addr && *o->master_addr) s.master_addr = std::string(o->master_addr);
    if (o->master_port < 0 || o->master_port > 65535) {
        return bad("master_port " + std::to_string(o->master_port) + " is not 0..65535");
    }
    if (o->master_port > 0) s.master_port = static_cast<std::uint16_t>(o->master_port);
    s.local_comm = o->no_local_comm == 0;
    if (o->nccl_unique_ids < 0) {
        return bad("nccl_unique_ids " + std::to_string(o->nccl_unique_ids) + " is negative");
    }
    s.unique_ids = o->nccl_unique_ids > 1 ? o->nccl_unique_ids : 1;
    SDDP_TRY(allow, parse_allow_unauthenticated(env(contract::kAllowUnauthenticatedVar)));
    s.allow_unauthenticated = o->allow_unauthenticated != 0 || allow;
    return s;
}

}  // namespace sddp::api

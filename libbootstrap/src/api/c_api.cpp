// SPDX-License-Identifier: Apache-2.0
// The C entry points: argument checks and the catch-all boundary. No exception crosses it.
#include <new>

#include "api/bootstrap.hpp"
#include "api/last_error.hpp"
#include "api/settings.hpp"
#include "nccl/nccl_layer.hpp"
#include "os/process_env.hpp"
#include "os/stderr_log.hpp"
#include "slurm_ddp/bootstrap.h"

using sddp::api::set_last_error;

namespace {

int internal_error(const char* where) {
    return set_last_error(SDDP_ERR_INTERNAL, std::string("slurm-ddp: internal error in ") + where +
                                                 " (out of memory?)");
}

template <typename T>
T get(const sddp_handle* h, T sddp_handle::*field, T fallback) {
    return h ? h->*field : fallback;
}

}  // namespace

extern "C" {

// allow_unauthenticated took the struct's tail padding: programs built against the older header
// pass a struct of the same size, and sddp_options_init zeroes the field for them.
static_assert(sizeof(void*) != 8 || sizeof(sddp_options) == 48, "sddp_options changed size");

int sddp_options_init(sddp_options* o) {
    if (!o) return set_last_error(SDDP_ERR_INVALID_ARGUMENT, "slurm-ddp: sddp_options_init: NULL");
    *o = sddp_options{};
    o->version = SDDP_OPTIONS_VERSION;
    o->transport = SDDP_TRANSPORT_AUTO;
    return SDDP_OK;
}

int sddp_init(const sddp_options* opts, sddp_handle** out) {
    try {
        if (!out) {
            return set_last_error(SDDP_ERR_INVALID_ARGUMENT,
                                  "slurm-ddp: sddp_init: the output pointer is NULL");
        }
        *out = nullptr;
        const sddp::EnvLookup env = sddp::process_env();
        sddp::use_stderr_log(env);
        auto settings = sddp::api::read_settings(opts, env);
        if (!settings) {
            return set_last_error(SDDP_ERR_INVALID_ARGUMENT,
                                  "slurm-ddp: sddp_init: " + settings.error().message);
        }
        std::unique_ptr<sddp_handle> h;
        const int rc = sddp::api::bootstrap(*settings, env, h);
        if (rc == SDDP_OK) *out = h.release();
        return rc;
    } catch (...) {
        return internal_error("sddp_init");
    }
}

int sddp_finalize(sddp_handle* h) {
    if (!h) return SDDP_OK;
    try {
        return sddp::api::shutdown(std::unique_ptr<sddp_handle>(h));
    } catch (...) {
        return internal_error("sddp_finalize");
    }
}

int sddp_abort(sddp_handle* h, const char* reason) {
    if (!h) return SDDP_OK;
    try {
        sddp::api::abort_handle(std::unique_ptr<sddp_handle>(h), reason);
        return SDDP_OK;
    } catch (...) {
        return internal_error("sddp_abort");
    }
}

int sddp_rank(const sddp_handle* h) {
    return h ? static_cast<int>(h->id.rank) : -1;
}
int sddp_world_size(const sddp_handle* h) {
    return h ? static_cast<int>(h->id.world_size) : -1;
}
int sddp_local_rank(const sddp_handle* h) {
    return get(h, &sddp_handle::local_rank, -1);
}
int sddp_local_world_size(const sddp_handle* h) {
    return get(h, &sddp_handle::local_world_size, -1);
}
int sddp_node_rank(const sddp_handle* h) {
    return get(h, &sddp_handle::node_rank, -1);
}
int sddp_num_nodes(const sddp_handle* h) {
    return get(h, &sddp_handle::num_nodes, -1);
}
int sddp_cuda_device(const sddp_handle* h) {
    return get(h, &sddp_handle::cuda_device, -1);
}

void* sddp_nccl_comm(const sddp_handle* h) {
    return h && h->comms ? h->comms->world() : nullptr;
}
void* sddp_nccl_local_comm(const sddp_handle* h) {
    return h && h->comms ? h->comms->local() : nullptr;
}

const char* sddp_transport_name(const sddp_handle* h) {
    return h ? h->transport_name.c_str() : "";
}
const char* sddp_identity_source(const sddp_handle* h) {
    return h ? h->source.c_str() : "";
}
const char* sddp_host(const sddp_handle* h) {
    return h ? h->host.c_str() : "";
}

const char* sddp_last_error(void) {
    return sddp::api::last_error_message();
}
int sddp_last_error_code(void) {
    return sddp::api::last_error_code();
}

const char* sddp_status_name(int status) {
    switch (status) {
        case SDDP_OK:
            return "SDDP_OK";
        case SDDP_ERR_INVALID_ARGUMENT:
            return "SDDP_ERR_INVALID_ARGUMENT";
        case SDDP_ERR_IDENTITY:
            return "SDDP_ERR_IDENTITY";
        case SDDP_ERR_RENDEZVOUS:
            return "SDDP_ERR_RENDEZVOUS";
        case SDDP_ERR_TIMEOUT:
            return "SDDP_ERR_TIMEOUT";
        case SDDP_ERR_PREFLIGHT:
            return "SDDP_ERR_PREFLIGHT";
        case SDDP_ERR_CUDA:
            return "SDDP_ERR_CUDA";
        case SDDP_ERR_NCCL:
            return "SDDP_ERR_NCCL";
        case SDDP_ERR_UNSUPPORTED:
            return "SDDP_ERR_UNSUPPORTED";
        case SDDP_ERR_INTERNAL:
            return "SDDP_ERR_INTERNAL";
        default:
            return "SDDP_ERR_UNKNOWN";
    }
}

const char* sddp_version(void) {
    return SDDP_VERSION_STRING;
}
int sddp_have_nccl(void) {
    try {
        return sddp::nccl::load() ? 1 : 0;
    } catch (...) {
        return 0;
    }
}
int sddp_nccl_version(void) {
    try {
        return sddp::nccl::version();
    } catch (...) {
        return 0;
    }
}

}  // extern "C"

// SPDX-License-Identifier: Apache-2.0
#include "api/last_error.hpp"

#include "slurm_ddp/bootstrap.h"

namespace sddp::api {
namespace {

struct LastError {
    int code = SDDP_OK;
    std::string message;
};

LastError& last() {
    thread_local LastError e;
    return e;
}

}  // namespace

int status_for(Phase phase, Errc code) {
    switch (code) {
        case Errc::timeout:
            return SDDP_ERR_TIMEOUT;
        case Errc::unsupported:
            return SDDP_ERR_UNSUPPORTED;
        case Errc::internal:
            return SDDP_ERR_INTERNAL;
        default:
            break;
    }
    switch (phase) {
        case Phase::argument:
            return SDDP_ERR_INVALID_ARGUMENT;
        case Phase::identity:
            return SDDP_ERR_IDENTITY;
        case Phase::rendezvous:
            // No MASTER_ADDR/PORT is a launch (identity) problem, not a network one.
            return code == Errc::missing_input ? SDDP_ERR_IDENTITY : SDDP_ERR_RENDEZVOUS;
        case Phase::preflight:
            return code == Errc::invalid_input ? SDDP_ERR_PREFLIGHT : SDDP_ERR_RENDEZVOUS;
        case Phase::cuda:
            return SDDP_ERR_CUDA;
        case Phase::nccl:
            return SDDP_ERR_NCCL;
        case Phase::internal:
            return SDDP_ERR_INTERNAL;
    }
    return SDDP_ERR_INTERNAL;
}

int set_last_error(int status, std::string message) {
    auto& e = last();
    e.code = status;
    e.message = std::move(message);
    return status;
}

int fail(Phase phase, const Error& e) {
    return set_last_error(status_for(phase, e.code), e.message);
}

const char* last_error_message() {
    return last().message.c_str();
}
int last_error_code() {
    return last().code;
}

}  // namespace sddp::api

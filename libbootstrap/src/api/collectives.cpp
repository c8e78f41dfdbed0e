// SPDX-License-Identifier: Apache-2.0
// sddp_broadcast / sddp_allgather / sddp_barrier: small byte collectives over the rendezvous
// transport, with the sizes checked on every rank (a mismatch is a clear error, not corruption).
#include <cstdint>
#include <cstring>

#include "api/handle.hpp"
#include "api/last_error.hpp"
#include "slurm_ddp/bootstrap.h"

using sddp::api::Phase;
using sddp::api::set_last_error;

namespace {

int fail(const sddp_handle& h, const char* call, Phase phase, const sddp::Error& e) {
    return set_last_error(
        sddp::api::status_for(phase, e.code),
        "slurm-ddp: " + h.where() + ": " + call + " (" + h.transport_name + "): " + e.message);
}

int bad_argument(const sddp_handle* h, const char* call, const std::string& what) {
    return set_last_error(
        SDDP_ERR_INVALID_ARGUMENT,
        "slurm-ddp: " + (h ? h->where() + ": " : std::string()) + call + ": " + what);
}

int internal_error(const char* call) {
    return set_last_error(SDDP_ERR_INTERNAL, std::string("slurm-ddp: internal error in ") + call +
                                                 " (out of memory?)");
}

int usable(const sddp_handle* h, const char* call) {
    if (!h) return bad_argument(h, call, "the handle is NULL");
    if (!h->transport) return bad_argument(h, call, "the handle was finalized");
    return SDDP_OK;
}

}  // namespace

extern "C" {

int sddp_broadcast(sddp_handle* h, void* buf, size_t len, int root) {
    constexpr const char* kCall = "sddp_broadcast";
    try {
        if (int rc = usable(h, kCall); rc != SDDP_OK) return rc;
        if (!buf && len > 0) return bad_argument(h, kCall, "buf is NULL");
        if (root < 0 || root >= static_cast<int>(h->id.world_size)) {
            return bad_argument(h, kCall, "root " + std::to_string(root) + " is not a rank");
        }
        std::lock_guard<std::mutex> lock(h->mu);
        sddp::Bytes b;
        const auto* p = static_cast<const std::uint8_t*>(buf);
        if (static_cast<int>(h->id.rank) == root) b.assign(p, p + len);
        if (auto st = h->transport->broadcast(b, root); !st) {
            return fail(*h, kCall, Phase::rendezvous, st.error());
        }
        if (b.size() != len) {
            return bad_argument(h, kCall,
                                "rank " + std::to_string(root) + " broadcast " +
                                    std::to_string(b.size()) + " bytes but this rank passed len " +
                                    std::to_string(len) + ": every rank must pass the same len");
        }
        if (len > 0) std::memcpy(buf, b.data(), len);
        return SDDP_OK;
    } catch (...) {
        return internal_error(kCall);
    }
}

int sddp_allgather(sddp_handle* h, const void* mine, size_t len, void* out) {
    constexpr const char* kCall = "sddp_allgather";
    try {
        if (int rc = usable(h, kCall); rc != SDDP_OK) return rc;
        if ((!mine || !out) && len > 0) return bad_argument(h, kCall, "mine or out is NULL");
        std::lock_guard<std::mutex> lock(h->mu);
        const auto* p = static_cast<const std::uint8_t*>(mine);
        auto all = h->transport->allgather(std::span<const std::uint8_t>(p, p ? len : 0));
        if (!all) return fail(*h, kCall, Phase::rendezvous, all.error());
        if (all->size() != h->id.world_size) {
            return fail(*h, kCall, Phase::rendezvous,
                        sddp::make_error(sddp::Errc::protocol,
                                         std::to_string(all->size()) + " records for world size " +
                                             std::to_string(h->id.world_size)));
        }
        for (std::size_t r = 0; r < all->size(); ++r) {
            if ((*all)[r].size() != len) {
                return bad_argument(h, kCall,
                                    "rank " + std::to_string(r) + " contributed " +
                                        std::to_string((*all)[r].size()) +
                                        " bytes but this rank passed len " + std::to_string(len) +
                                        ": every rank must pass the same len");
            }
            if (len > 0)
                std::memcpy(static_cast<std::uint8_t*>(out) + r * len, (*all)[r].data(), len);
        }
        return SDDP_OK;
    } catch (...) {
        return internal_error(kCall);
    }
}

int sddp_barrier(sddp_handle* h) {
    constexpr const char* kCall = "sddp_barrier";
    try {
        if (int rc = usable(h, kCall); rc != SDDP_OK) return rc;
        std::lock_guard<std::mutex> lock(h->mu);
        if (auto st = h->transport->barrier(); !st)
            return fail(*h, kCall, Phase::rendezvous, st.error());
        return SDDP_OK;
    } catch (...) {
        return internal_error(kCall);
    }
}

}  // extern "C"

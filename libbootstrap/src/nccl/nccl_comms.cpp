// The world and node-local NCCL communicators: creation, finalisation, abort.
#include <nccl.h>

#include <algorithm>

#include "core/contract.hpp"
#include "nccl/nccl_layer.hpp"
#include "nccl/nccl_unique_ids.hpp"
#include "nccl/nccl_wait.hpp"

namespace sddp::nccl {
namespace {

ncclConfig_t nonblocking_config() {
    ncclConfig_t c = NCCL_CONFIG_INITIALIZER;
    c.blocking = 0;  // every NCCL call returns at once; we poll against our deadline
    return c;
}

std::string seconds(std::chrono::milliseconds t) {
    return std::to_string(t.count() / 1000) + "." + std::to_string(t.count() % 1000 / 100) + " s";
}

class NcclComms final : public Comms {
  public:
    ~NcclComms() override { abort(); }

    void* world() const override { return world_; }
    void* local() const override { return local_; }

    Status finalize(std::chrono::milliseconds timeout) override {
        const auto deadline = Clock::now() + timeout;
        Status first = ok_status();
        // The child first: it was split from the world communicator.
        for (ncclComm_t* c : {&local_, &world_}) {
            if (!*c) continue;
            Status s = finalize_one(*c, deadline);
            if (!s && first) first = s;
            *c = nullptr;
        }
        return first;
    }

    void abort() override {
        for (ncclComm_t* c : {&local_, &world_}) {
            if (*c) ncclCommAbort(*c);
            *c = nullptr;
        }
    }

    ncclComm_t world_ = nullptr;
    ncclComm_t local_ = nullptr;

  private:
    static Status finalize_one(ncclComm_t c, Clock::time_point deadline) {
        ncclResult_t r = ncclCommFinalize(c);
        if (r != ncclSuccess && r != ncclInProgress) {
            const std::string why = nccl_error_text(r, c);
            ncclCommAbort(c);
            return make_error(Errc::io, "ncclCommFinalize failed: " + why);
        }
        if (auto s = wait_ready(c, deadline, "ncclCommFinalize"); !s) {
            ncclCommAbort(c);  // a peer never finished its operations: do not wait for it
            return s;
        }
        r = ncclCommDestroy(c);
        if (r != ncclSuccess)
            return make_error(Errc::io,
                              std::string("ncclCommDestroy failed: ") + ncclGetErrorString(r));
        return ok_status();
    }
};

Error init_failed(const Error& e, const CommParams& p, const char* what) {
    if (e.code == Errc::timeout) {
        return make_error(Errc::timeout,
                          std::string(what) + " did not complete within " + seconds(p.timeout) +
                              ": a rank failed or stopped before it, or NCCL cannot connect the "
                              "nodes (firewall, wrong interface: set NCCL_SOCKET_IFNAME; run "
                              "with NCCL_DEBUG=INFO to see where it stopped), or raise " +
                              std::string(contract::kTimeoutVar));
    }
    return make_error(
        e.code, std::string(what) + ": " + e.message + " (NCCL_DEBUG=INFO shows the details)");
}

}  // namespace

Result<std::unique_ptr<Comms>> create_comms(Transport& t, const CommParams& p) {
    const int nids = std::clamp(p.unique_ids, 1, std::max(1, p.world_size));
    auto ids = share_unique_ids(t, nids);
    if (!ids)
        return make_error(ids.error().code, "sharing the NCCL unique id: " + ids.error().message);

    const auto deadline = Clock::now() + p.timeout;
    auto comms = std::make_unique<NcclComms>();
    ncclConfig_t config = nonblocking_config();
    const char* what = nids > 1 ? "ncclCommInitRankScalable" : "ncclCommInitRankConfig";
    ncclResult_t r =
        nids > 1 ? ncclCommInitRankScalable(&comms->world_, p.world_size, p.rank, nids, ids->data(),
                                            &config)
                 : ncclCommInitRankConfig(&comms->world_, p.world_size, (*ids)[0], p.rank, &config);
    if (r != ncclSuccess && r != ncclInProgress) {
        return init_failed(make_error(Errc::io, nccl_error_text(r, comms->world_)), p, what);
    }
    if (auto s = wait_ready(comms->world_, deadline, what); !s) {
        return init_failed(s.error(), p, what);  // ~NcclComms aborts the communicator
    }

    if (p.local_comm) {
        ncclConfig_t split_config = nonblocking_config();
        r = ncclCommSplit(comms->world_, p.node_color, p.rank, &comms->local_, &split_config);
        if (r != ncclSuccess && r != ncclInProgress) {
            return init_failed(make_error(Errc::io, nccl_error_text(r, comms->world_)), p,
                               "ncclCommSplit (node-local communicator)");
        }
        // Non-blocking split: the child's state tells when it is ready.
        if (auto s = wait_ready(comms->local_ ? comms->local_ : comms->world_, deadline,
                                "ncclCommSplit");
            !s) {
            return init_failed(s.error(), p, "ncclCommSplit (node-local communicator)");
        }
    }
    return std::unique_ptr<Comms>(std::move(comms));
}

}  // namespace sddp::nccl

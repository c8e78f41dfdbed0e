// SPDX-License-Identifier: Apache-2.0
// The world and node-local NCCL communicators: creation, finalisation, abort.
//
// NCCL bootstraps one non-blocking communicator (`init_`), so that init is bounded by our
// deadline, and hands the caller blocking children split from it: a non-blocking communicator
// stays non-blocking for life, and then every collective a user enqueues may return
// ncclInProgress and must be polled, which code written against plain NCCL does not do.
// NCCL decides whether a split shares resources from the *parent's* config (splitShare, read in
// ncclCommSplit from the communicator being split): the parent asks for it, so the children
// reuse its proxy thread, sockets and buffers instead of each holding its own. The children ask
// for no sharing, so that a user's own ncclCommSplit of the world communicator gets resources
// and an abort flag of its own, as with plain NCCL.
#include <algorithm>

#include "core/contract/contract.hpp"
#include "nccl/nccl_agreement.hpp"
#include "nccl/nccl_bounded.hpp"
#include "nccl/nccl_environment.hpp"
#include "nccl/nccl_layer.hpp"
#include "nccl/nccl_library.hpp"
#include "nccl/nccl_unique_ids.hpp"
#include "nccl/nccl_wait.hpp"

namespace sddp::nccl {
namespace {

ncclConfig_t nonblocking_config() {
    ncclConfig_t c = NCCL_CONFIG_INITIALIZER;
    c.blocking = 0;    // init returns at once; we poll against our deadline
    c.splitShare = 1;  // its children (world, local) share its resources
    return c;
}

ncclConfig_t child_config() {
    ncclConfig_t c = NCCL_CONFIG_INITIALIZER;
    c.blocking = 1;    // what users of the handed-out communicators expect
    c.splitShare = 0;  // a user's split of these is plain NCCL's: nothing shared
    return c;
}

std::string seconds(std::chrono::milliseconds t) {
    return std::to_string(t.count() / 1000) + "." + std::to_string(t.count() % 1000 / 100) + " s";
}

class NcclComms final : public Comms {
  public:
    explicit NcclComms(const NcclApi& nccl) : nccl_(nccl) {}
    ~NcclComms() override { abort(); }
    NcclComms(const NcclComms&) = delete;
    NcclComms& operator=(const NcclComms&) = delete;

    void* world() const override { return world_; }
    void* local() const override { return local_; }

    Status finalize(std::chrono::milliseconds timeout) override {
        const auto deadline = Clock::now() + timeout;
        // The children first: they share the parent's resources.
        for (ncclComm_t* c : {&local_, &world_, &init_}) {
            if (!*c) continue;
            if (Status s = finalize_one(*c, deadline); !s) {
                abort();  // the rest, parent first
                return s;
            }
        }
        return ok_status();
    }

    // The parent first: its abort flag is shared with the children (splitShare) and it owns
    // the split job that may still be writing a child.
    void abort() override {
        for (ncclComm_t* c : {&init_, &world_, &local_}) {
            if (*c) nccl_.CommAbort(*c);
            *c = nullptr;
        }
    }

    // Splits a blocking child from init_ into `out` (a member, because NCCL's split job
    // writes it after ncclCommSplit returns, when the parent is non-blocking).
    Status split(int color, int key, ncclComm_t& out, Clock::time_point deadline,
                 const std::string& what) {
        ncclConfig_t config = child_config();
        const ncclResult_t r = nccl_.CommSplit(init_, color, key, &out, &config);
        if (r != ncclSuccess && r != ncclInProgress)
            return make_error(Errc::io, nccl_error_text(nccl_, r, init_));
        // The split runs as a job of the parent: the parent's state says when it has finished
        // and written the child; only then is the child's handle ours to read.
        SDDP_CHECK(wait_ready(nccl_, init_, deadline, what));
        if (!out)
            return make_error(Errc::io, what + " completed without creating the communicator");
        return wait_ready(nccl_, out, deadline, what);
    }

    const NcclApi& nccl_;
    ncclComm_t init_ = nullptr;   // non-blocking, bootstrapped by NCCL; never handed out
    ncclComm_t world_ = nullptr;  // blocking child, all ranks
    ncclComm_t local_ = nullptr;  // blocking child, this node's ranks

  private:
    // Polls the state before finalising (an enqueued operation may still be running on a
    // non-blocking communicator), then ncclCommFinalize and ncclCommDestroy; aborts on any
    // failure so that nothing is left behind. ncclCommFinalize has no barrier with the peers,
    // but on a blocking child it returns only when this rank's operations queued on it have
    // completed, and a collective that a dead or hung peer never joins does not: it runs as a
    // BoundedCall. At the deadline the call is abandoned, not aborted under the thread still
    // inside NCCL (that would free the communicator under it): the thread aborts it when the
    // call returns, which the caller's abort of the parent (it shares the abort flag) brings
    // about.
    Status finalize_one(ncclComm_t& c, Clock::time_point deadline) {
        const ncclComm_t comm = c;
        c = nullptr;
        const auto fail = [&](Error e) {
            nccl_.CommAbort(comm);
            return e;
        };
        if (Status s = wait_ready(nccl_, comm, deadline, "waiting before ncclCommFinalize"); !s)
            return fail(s.take_error());
        auto result = std::make_shared<ncclResult_t>(ncclInternalError);
        BoundedCall call([&nccl = nccl_, comm, result] { *result = nccl.CommFinalize(comm); },
                         [&nccl = nccl_, comm] { nccl.CommAbort(comm); });
        if (!call.wait_until(deadline)) {
            if (call.abandon()) nccl_.CommAbort(comm);  // it returned just now: ours again
            return make_error(Errc::timeout,
                              "ncclCommFinalize did not return before the deadline: an "
                              "operation queued on the communicator never completed (a peer "
                              "stopped inside a collective, hung, or died); the communicator is "
                              "aborted instead");
        }
        ncclResult_t r = *result;
        if (r != ncclSuccess && r != ncclInProgress)
            return fail(make_error(Errc::io,
                                   "ncclCommFinalize failed: " + nccl_error_text(nccl_, r, comm)));
        if (Status s = wait_ready(nccl_, comm, deadline, "ncclCommFinalize"); !s)
            return fail(s.take_error());  // a peer never finished: do not wait for it
        r = nccl_.CommDestroy(comm);
        if (r != ncclSuccess) {
            return fail(make_error(Errc::io, std::string("ncclCommDestroy failed: ") +
                                                 nccl_.GetErrorString(r) +
                                                 " (the communicator was aborted instead)"));
        }
        return ok_status();
    }
};

Error init_failed(const Error& e, const CommParams& p, const std::string& what) {
    if (e.code == Errc::timeout) {
        return make_error(Errc::timeout,
                          what + " did not complete within " + seconds(p.timeout) +
                              ": a rank failed or stopped before it, or NCCL cannot connect the "
                              "nodes (firewall, wrong interface: set NCCL_SOCKET_IFNAME; run "
                              "with NCCL_DEBUG=INFO to see where it stopped), or raise " +
                              std::string(contract::kTimeoutVar));
    }
    return make_error(e.code, what + ": " + e.message + " (NCCL_DEBUG=INFO shows the details)");
}

// What every rank checks before NCCL: its device (the caller's setup_error), NCCL_COMM_ID
// against the id count, NCCL_COMM_BLOCKING, and the entry point several ids need.
Status ready_for_init(const NcclApi& nccl, const CommParams& p, int nids) {
    if (p.setup_error) return *p.setup_error;
    SDDP_CHECK(check_comm_id(p.nccl_comm_id, nids));
    SDDP_CHECK(check_comm_blocking(p.nccl_comm_blocking));
    if (nids > 1 && !nccl.CommInitRankScalable) {
        return make_error(
            Errc::unsupported,
            "nccl_unique_ids=" + std::to_string(nids) + " needs ncclCommInitRankScalable (NCCL " +
                version_text(kScalableNcclVersion) + "), but NCCL " + version_text(nccl.version) +
                " at " + nccl.path + " lacks it; use one id or a newer NCCL");
    }
    return ok_status();
}

// ncclCommInitRank* polled to the deadline, then the splits; the first failure, named.
Status init_and_split(const NcclApi& nccl, NcclComms& comms, std::vector<ncclUniqueId>& ids,
                      const CommParams& p, int nids) {
    const auto deadline = Clock::now() + p.timeout;
    ncclConfig_t config = nonblocking_config();
    const std::string what = nids > 1 ? "ncclCommInitRankScalable" : "ncclCommInitRankConfig";
    const ncclResult_t r =
        nids > 1 ? nccl.CommInitRankScalable(&comms.init_, p.world_size, p.rank, nids, ids.data(),
                                             &config)
                 : nccl.CommInitRankConfig(&comms.init_, p.world_size, ids[0], p.rank, &config);
    if (r != ncclSuccess && r != ncclInProgress) {
        return init_failed(make_error(Errc::io, nccl_error_text(nccl, r, comms.init_)), p, what);
    }
    if (auto s = wait_ready(nccl, comms.init_, deadline, what); !s) {
        return init_failed(s.error(), p, what);
    }
    const std::string world_what = "ncclCommSplit (blocking world communicator)";
    if (auto s = comms.split(0, p.rank, comms.world_, deadline, world_what); !s)
        return init_failed(s.error(), p, world_what);
    if (p.local_comm) {
        const std::string local_what = "ncclCommSplit (node-local communicator)";
        if (auto s = comms.split(p.node_color, p.rank, comms.local_, deadline, local_what); !s)
            return init_failed(s.error(), p, local_what);
    }
    return ok_status();
}

}  // namespace

Result<std::unique_ptr<Comms>> create_comms(Transport& t, const CommParams& p) {
    SDDP_TRY(nccl_ptr, nccl_api());
    const NcclApi& nccl = *nccl_ptr;
    const int nids = std::clamp(p.unique_ids, 1, std::max(1, p.world_size));
    // Agreed before NCCL, so that one rank's bad device stops every rank at once, naming it,
    // instead of leaving its peers polling ncclCommInitRank until their deadline.
    SDDP_CHECK(agree(t, ready_for_init(nccl, p, nids), "GPU and NCCL setup before init", p.host));
    auto ids = share_unique_ids(nccl, t, nids);
    if (!ids)
        return make_error(ids.error().code, "sharing the NCCL unique id: " + ids.error().message);

    auto comms = std::make_unique<NcclComms>(nccl);
    const Status mine = init_and_split(nccl, *comms, *ids, p, nids);
    // Agreed after: a rank whose init failed says why, and every rank returns that reason.
    if (Status verdict = agree(t, mine, "NCCL init", p.host); !verdict) {
        comms->abort();
        return verdict.take_error();
    }
    return std::unique_ptr<Comms>(std::move(comms));
}

}  // namespace sddp::nccl

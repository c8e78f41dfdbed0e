// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/pmix_transport.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>

#include "core/contract.hpp"
#include "rendezvous/kvs_transport.hpp"
#include "rendezvous/pmi2_worker.hpp"
#include "rendezvous/pmix_keys.hpp"
#include "rendezvous/pmix_library.hpp"

namespace sddp {
namespace {

using Clock = std::chrono::steady_clock;
using pmix_abi::Info;
using pmix_abi::Proc;
using pmix_abi::Value;

// One per process: PMIx is initialised once, and its calls are serialised on one worker.
struct PmixSession {
    PmixApi api;
    Pmi2Worker worker{"PMIx"};
    Proc me{};
    std::uint32_t size = 0;             // PMIX_JOB_SIZE; 0 when the server does not say
    std::atomic<std::uint64_t> seq{0};  // next key sequence number: keys never repeat
};

std::string code_text(const PmixApi& api, int rc) {
    const char* name = api.error_string ? api.error_string(rc) : nullptr;
    return std::string(name ? name : "PMIx error") + " (" + std::to_string(rc) + ")";
}

Proc proc_of(const PmixSession& s, pmix_abi::rank_t rank) {
    Proc p{};
    std::memcpy(p.nspace, s.me.nspace, sizeof p.nspace);
    p.rank = rank;
    return p;
}

// Frees a value libpmix returned from PMIx_Get.
void release(const PmixApi& api, Value* v) {
    if (!v) return;
    if (api.value_destruct) {
        api.value_destruct(v);
    } else if (v->type == pmix_abi::kByteObject) {
        std::free(v->data.bo.bytes);
    }
    std::free(v);
}

Result<PmixSession*> session(const EnvLookup& env, Clock::time_point deadline) {
    static std::mutex mu;
    static PmixSession* s = nullptr;  // leaked on purpose: a wedged worker may still use it
    static std::optional<Error> failed;
    std::lock_guard<std::mutex> lock(mu);
    if (s) return s;
    if (failed) return *failed;
    SDDP_TRY(api, load_pmix(env));
    auto* fresh = new PmixSession;
    fresh->api = api;
    // Everything a PMIx call writes lives in shared state, never on this stack: after a timeout
    // this function returns while the wedged worker may still complete the call later.
    auto me = std::make_shared<Proc>();
    auto rc = fresh->worker.call([fresh, me] { return fresh->api.init(me.get(), nullptr, 0); },
                                 deadline, "PMIx_Init");
    if (!rc || *rc != pmix_abi::kSuccess) {
        failed = rc ? make_error(Errc::io, "PMIx_Init failed (" + code_text(api, *rc) +
                                               "): is this task started by srun --mpi=pmix?")
                    : rc.error();
        if (rc) delete fresh;  // a wedged worker is leaked with the session
        return *failed;
    }
    fresh->me = *me;
    fresh->me.nspace[pmix_abi::kMaxNsLen] = '\0';
    // The job size, to check the identity against; a server that does not say is not an error.
    struct SizeOut {
        Value* v = nullptr;
    };
    auto out = std::make_shared<SizeOut>();
    const Proc job = proc_of(*fresh, pmix_abi::kRankWildcard);
    auto src = fresh->worker.call(
        [fresh, job, out] { return fresh->api.get(&job, pmix_abi::kJobSize, nullptr, 0, &out->v); },
        deadline, "PMIx_Get(" + std::string(pmix_abi::kJobSize) + ")");
    if (!src) {
        failed = src.error();
        return *failed;
    }
    if (*src == pmix_abi::kSuccess && out->v && out->v->type == pmix_abi::kUint32)
        fresh->size = out->v->data.uint32;
    release(fresh->api, out->v);
    s = fresh;
    return s;
}

class PmixTransport final : public KvsTransport {
  public:
    PmixTransport(const RendezvousConfig& cfg, PmixSession* s) : KvsTransport(cfg, "PMIx"), s_(s) {}

    std::string_view name() const override { return "pmix"; }

  private:
    std::uint64_t next_seq() override { return s_->seq++; }

    Status put(std::uint64_t seq, std::span<const std::uint8_t> bytes,
               Clock::time_point deadline) override {
        if (bytes.size() > pmix::kMaxRecordBytes) {
            return fail(Errc::too_large,
                        "a record of " + std::to_string(bytes.size()) + " bytes exceeds the " +
                            std::to_string(pmix::kMaxRecordBytes >> 20) + " MiB limit");
        }
        // Owned by the call, not by this stack: the worker may run it after a timeout unwound us.
        auto data = std::make_shared<Bytes>(bytes.begin(), bytes.end());
        const std::string k = pmix::key(seq);
        SDDP_TRY(rc, s_->worker.call(
                         [s = s_, k, data] {
                             Value v{};
                             v.type = pmix_abi::kByteObject;
                             v.data.bo.bytes = reinterpret_cast<char*>(data->data());
                             v.data.bo.size = data->size();
                             // PMIx_Put copies the value.
                             const int prc = s->api.put(pmix_abi::kGlobal, k.c_str(), &v);
                             return prc != pmix_abi::kSuccess ? prc : s->api.commit();
                         },
                         deadline, "PMIx_Put"));
        if (rc != pmix_abi::kSuccess)
            return fail(Errc::io,
                        "PMIx_Put/PMIx_Commit(" + k + ") failed: " + code_text(s_->api, rc));
        return ok_status();
    }

    // Every fence collects: each node then holds the records put since the last fence, so the
    // gets after it are answered locally instead of by a request to the owner's node each. A
    // barrier has nothing to collect, but Slurm 22.05's fence without PMIX_COLLECT_DATA was
    // seen to return at once and leave the next fence hanging on the test cluster.
    Status fence(Clock::time_point deadline, const std::string& what) override {
        const Proc all = proc_of(*s_, pmix_abi::kRankWildcard);
        auto rc = s_->worker.call(
            [s = s_, all] {
                Info info{};
                std::strncpy(info.key, pmix_abi::kCollectData, pmix_abi::kMaxKeyLen);
                info.value.type = pmix_abi::kBool;
                info.value.data.flag = true;
                return s->api.fence(&all, 1, &info, 1);
            },
            deadline, "PMIx_Fence");
        // Refused at once (an earlier call wedged the worker): that reason is the useful one.
        if (!rc && Clock::now() < deadline) return fail(rc.error().code, rc.error().message);
        if (!rc) {
            return fail(Errc::timeout,
                        "PMIx_Fence (" + what + ") did not complete within " +
                            std::to_string(cfg_.timeout.count() / 1000) + " s: some of the " +
                            std::to_string(cfg_.world_size) +
                            " ranks never reached it (PMIx cannot say which); check that every "
                            "task calls sddp_init, or raise " +
                            std::string(contract::kTimeoutVar));
        }
        if (*rc != pmix_abi::kSuccess)
            return fail(Errc::io, "PMIx_Fence (" + what + ") failed: " + code_text(s_->api, *rc));
        return ok_status();
    }

    Result<Bytes> get(std::uint64_t seq, int src, Clock::time_point deadline) override {
        struct GetOut {
            Value* v = nullptr;
        };
        auto out = std::make_shared<GetOut>();
        const std::string k = pmix::key(seq);
        const Proc from = proc_of(*s_, static_cast<pmix_abi::rank_t>(src));
        SDDP_TRY(
            rc, s_->worker.call([s = s_, from, k,
                                 out] { return s->api.get(&from, k.c_str(), nullptr, 0, &out->v); },
                                deadline, "PMIx_Get"));
        const auto done = [&] { release(s_->api, out->v); };
        if (rc != pmix_abi::kSuccess) {
            done();
            return fail(Errc::protocol, "PMIx_Get(" + k + ") from rank " + std::to_string(src) +
                                            " failed: " + code_text(s_->api, rc));
        }
        if (!out->v || out->v->type != pmix_abi::kByteObject ||
            out->v->data.bo.size > pmix::kMaxRecordBytes) {
            done();
            return fail(Errc::protocol, "PMIx_Get(" + k + ") from rank " + std::to_string(src) +
                                            " returned something other than a record of at most " +
                                            std::to_string(pmix::kMaxRecordBytes >> 20) + " MiB");
        }
        const auto* p = reinterpret_cast<const std::uint8_t*>(out->v->data.bo.bytes);
        Bytes bytes(p, p + out->v->data.bo.size);
        done();
        return bytes;
    }

    PmixSession* s_;
};

}  // namespace

bool pmix_environment(const EnvLookup& env) {
    for (const char* n : {"PMIX_RANK", "PMIX_NAMESPACE"}) {
        auto v = env(n);
        if (!v || v->empty()) return false;
    }
    for (const char* n : {"PMIX_SERVER_URI41", "PMIX_SERVER_URI4", "PMIX_SERVER_URI3",
                          "PMIX_SERVER_URI21", "PMIX_SERVER_URI2", "PMIX_SERVER_URI"}) {
        if (auto v = env(n); v && !v->empty()) return true;
    }
    return false;
}

Result<std::unique_ptr<Transport>> make_pmix_transport(const RendezvousConfig& cfg,
                                                       const EnvLookup& env) {
    const auto deadline = Clock::now() + cfg.timeout;
    auto s = session(env, deadline);
    if (!s) {
        return make_error(s.error().code, "PMIx rendezvous, rank " + std::to_string(cfg.rank) +
                                              " on " + cfg.host + ": " + s.error().message);
    }
    // PMIx numbers the processes itself, and peers are addressed by that number: a different
    // numbering means the identity is not this step's.
    const auto prank = static_cast<long long>((*s)->me.rank);
    if (prank != cfg.rank ||
        ((*s)->size != 0 && (*s)->size != static_cast<std::uint32_t>(cfg.world_size))) {
        return make_error(Errc::invalid_input,
                          "PMIx says this task is rank " + std::to_string(prank) + " of " +
                              ((*s)->size ? std::to_string((*s)->size) : std::string("?")) +
                              " (namespace " + (*s)->me.nspace + ") but the identity says rank " +
                              std::to_string(cfg.rank) + " of " + std::to_string(cfg.world_size) +
                              " (host " + cfg.host +
                              "): the RANK/WORLD_SIZE variables do not belong to this srun step; "
                              "unset them or use " +
                              std::string(contract::kTransportVar) + "=tcp");
    }
    return std::unique_ptr<Transport>(new PmixTransport(cfg, *s));
}

}  // namespace sddp

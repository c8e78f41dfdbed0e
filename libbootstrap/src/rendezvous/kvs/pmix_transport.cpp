// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/kvs/pmix_transport.hpp"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "core/contract/contract.hpp"
#include "rendezvous/kvs/kvs_transport.hpp"
#include "rendezvous/kvs/pmi2_worker.hpp"
#include "rendezvous/kvs/pmix_library.hpp"

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
    // this function returns while the wedged worker may still complete the call later. The job
    // size is read in the same hand-off as PMIx_Init: every task of a step pays each hand-off
    // at once.
    struct InitOut {
        Proc me{};
        Value* size = nullptr;
        int size_rc = pmix_abi::kSuccess;
    };
    auto out = std::make_shared<InitOut>();
    auto rc = fresh->worker.call(
        [fresh, out] {
            const int irc = fresh->api.init(&out->me, nullptr, 0);
            if (irc != pmix_abi::kSuccess) return irc;
            Proc job{};
            std::memcpy(job.nspace, out->me.nspace, sizeof job.nspace);
            job.nspace[pmix_abi::kMaxNsLen] = '\0';
            job.rank = pmix_abi::kRankWildcard;
            out->size_rc = fresh->api.get(&job, pmix_abi::kJobSize, nullptr, 0, &out->size);
            return irc;
        },
        deadline, "PMIx_Init");
    if (!rc || *rc != pmix_abi::kSuccess) {
        failed = rc ? make_error(Errc::io, "PMIx_Init failed (" + code_text(api, *rc) +
                                               "): is this task started by srun --mpi=pmix?")
                    : rc.error();
        if (rc) delete fresh;  // a wedged worker is leaked with the session
        return *failed;
    }
    fresh->me = out->me;
    fresh->me.nspace[pmix_abi::kMaxNsLen] = '\0';
    // The job size, to check the identity against; a server that does not say is not an error.
    if (out->size_rc == pmix_abi::kSuccess && out->size && out->size->type == pmix_abi::kUint32)
        fresh->size = out->size->data.uint32;
    release(fresh->api, out->size);
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
        SDDP_TRY(all, get_many(seq, std::vector<int>{src}, deadline));
        return std::move(all.front());
    }

    // All the gets in one call on the worker: rank 0 of a gather reads N - 1 records, and a
    // hand-off per record cost two scheduler wake-ups each on a loaded node.
    Result<std::vector<Bytes>> get_many(std::uint64_t seq, const std::vector<int>& srcs,
                                        Clock::time_point deadline) override {
        struct GetOut {
            std::vector<Value*> v;
            std::vector<int> rc;  // values left here after a timeout are leaked with the call
        };
        auto out = std::make_shared<GetOut>();
        out->v.assign(srcs.size(), nullptr);
        out->rc.assign(srcs.size(), pmix_abi::kSuccess);
        auto from = std::make_shared<std::vector<Proc>>();
        from->reserve(srcs.size());
        for (int src : srcs) from->push_back(proc_of(*s_, static_cast<pmix_abi::rank_t>(src)));
        const std::string k = pmix::key(seq);
        SDDP_TRY(rc, s_->worker.call(
                         [s = s_, from, k, out] {
                             for (std::size_t i = 0; i < from->size(); ++i) {
                                 out->rc[i] =
                                     s->api.get(&(*from)[i], k.c_str(), nullptr, 0, &out->v[i]);
                                 if (out->rc[i] != pmix_abi::kSuccess) return out->rc[i];
                             }
                             return static_cast<int>(pmix_abi::kSuccess);
                         },
                         deadline, "PMIx_Get"));
        (void)rc;  // each get's own code is in out->rc
        std::vector<Bytes> records;
        records.reserve(srcs.size());
        std::optional<Error> first_error;
        for (std::size_t i = 0; i < srcs.size(); ++i) {
            if (!first_error) {
                auto r = record(k, srcs[i], out->rc[i], out->v[i]);
                if (r) {
                    records.push_back(std::move(*r));
                } else {
                    first_error = r.error();
                }
            }
            release(s_->api, out->v[i]);
            out->v[i] = nullptr;
        }
        if (first_error) return *first_error;
        return records;
    }

    // The bytes of what PMIx_Get returned for `src`, or why it is not a record.
    Result<Bytes> record(const std::string& k, int src, int rc, const Value* v) const {
        if (rc != pmix_abi::kSuccess) {
            return fail(Errc::protocol, "PMIx_Get(" + k + ") from rank " + std::to_string(src) +
                                            " failed: " + code_text(s_->api, rc));
        }
        if (!v || v->type != pmix_abi::kByteObject || v->data.bo.size > pmix::kMaxRecordBytes) {
            return fail(Errc::protocol, "PMIx_Get(" + k + ") from rank " + std::to_string(src) +
                                            " returned something other than a record of at most " +
                                            std::to_string(pmix::kMaxRecordBytes >> 20) + " MiB");
        }
        const auto* p = reinterpret_cast<const std::uint8_t*>(v->data.bo.bytes);
        return Bytes(p, p + v->data.bo.size);
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

namespace sddp::pmix {

std::string key(std::uint64_t seq) {
    return "sddp." + std::to_string(seq);
}

}  // namespace sddp::pmix

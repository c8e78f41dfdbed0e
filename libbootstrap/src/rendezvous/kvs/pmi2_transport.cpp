// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/kvs/pmi2_transport.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/contract/contract.hpp"
#include "rendezvous/kvs/kvs_transport.hpp"
#include "rendezvous/kvs/pmi2_codec.hpp"
#include "rendezvous/kvs/pmi2_library.hpp"
#include "rendezvous/kvs/pmi2_worker.hpp"

namespace sddp {
namespace {

using Clock = std::chrono::steady_clock;

// One per process: PMI2 allows one session, and its calls must be serialised.
struct Pmi2Session {
    Pmi2Api api;
    Pmi2Worker worker;
    int rank = -1;
    int size = 0;
    std::string jobid;
    std::atomic<std::uint64_t> seq{0};  // next key sequence number: keys never repeat
};

std::string code_text(int rc) {
    return "PMI2 error code " + std::to_string(rc);
}

Result<Pmi2Session*> session(const EnvLookup& env, Clock::time_point deadline) {
    static std::mutex mu;
    static Pmi2Session* s = nullptr;  // leaked on purpose: a wedged worker may still use it
    static std::optional<Error> failed;
    std::lock_guard<std::mutex> lock(mu);
    if (s) return s;
    if (failed) return *failed;
    SDDP_TRY(api, load_pmi2(env));
    auto* fresh = new Pmi2Session;
    fresh->api = api;
    // Everything a PMI2 call writes lives in shared state, never on this stack: after a timeout
    // this function returns while the wedged worker may still complete the call later.
    struct InitOut {
        int spawned = 0, size = 0, rank = -1, appnum = 0;
    };
    auto init_out = std::make_shared<InitOut>();
    auto rc = fresh->worker.call(
        [fresh, init_out] {
            if (fresh->api.initialized()) return 0;  // an MPI library got there first
            return fresh->api.init(&init_out->spawned, &init_out->size, &init_out->rank,
                                   &init_out->appnum);
        },
        deadline, "PMI2_Init");
    const int size = init_out->size;
    const int rank = init_out->rank;
    if (!rc || *rc != 0) {
        failed = rc ? make_error(Errc::io, "PMI2_Init failed (" + code_text(*rc) +
                                               "): is this task started by srun --mpi=pmi2?")
                    : rc.error();
        // A wedged worker is leaked with the session; otherwise free it.
        if (rc) delete fresh;
        return *failed;
    }
    auto id_out = std::make_shared<std::array<char, 256>>();
    auto jrc = fresh->worker.call(
        [fresh, id_out] {
            return fresh->api.job_get_id(id_out->data(), static_cast<int>(id_out->size()));
        },
        deadline, "PMI2_Job_GetId");
    const auto& id = *id_out;
    if (!jrc || *jrc != 0) {
        failed = jrc ? make_error(Errc::io, "PMI2_Job_GetId failed (" + code_text(*jrc) + ")")
                     : jrc.error();
        return *failed;
    }
    fresh->jobid.assign(id.data());
    fresh->rank = rank;
    fresh->size = size;
    s = fresh;
    return s;
}

class Pmi2Transport final : public KvsTransport {
  public:
    Pmi2Transport(const RendezvousConfig& cfg, Pmi2Session* s) : KvsTransport(cfg, "PMI2"), s_(s) {}

    std::string_view name() const override { return "pmi2"; }

  private:
    std::uint64_t next_seq() override { return s_->seq++; }

    Status put(std::uint64_t seq, std::span<const std::uint8_t> bytes,
               Clock::time_point deadline) override {
        if (bytes.size() > pmi2::kMaxRecordBytes) {
            return fail(Errc::too_large, "a record of " + std::to_string(bytes.size()) +
                                             " bytes exceeds the 1 MiB limit");
        }
        const auto values = pmi2::encode_values(bytes);
        for (std::size_t i = 0; i < values.size(); ++i) {
            const std::string k = pmi2::key(seq, cfg_.rank, i);
            const std::string& v = values[i];
            // Captures by value only: the worker may run this after a timeout has unwound us.
            SDDP_TRY(
                rc, s_->worker.call([s = s_, k, v] { return s->api.kvs_put(k.c_str(), v.c_str()); },
                                    deadline, "PMI2_KVS_Put"));
            if (rc != 0) return fail(Errc::io, "PMI2_KVS_Put(" + k + ") failed: " + code_text(rc));
        }
        return ok_status();
    }

    Status fence(Clock::time_point deadline, const std::string& what) override {
        auto rc =
            s_->worker.call([s = s_] { return s->api.kvs_fence(); }, deadline, "PMI2_KVS_Fence");
        if (!rc) {
            return fail(Errc::timeout,
                        "PMI2_KVS_Fence (" + what + ") did not complete within " +
                            std::to_string(cfg_.timeout.count() / 1000) + " s: some of the " +
                            std::to_string(cfg_.world_size) +
                            " ranks never reached it (PMI2 cannot say which); check that every "
                            "task calls sddp_init, or raise " +
                            std::string(contract::kTimeoutVar));
        }
        if (*rc != 0)
            return fail(Errc::io, "PMI2_KVS_Fence (" + what + ") failed: " + code_text(*rc));
        return ok_status();
    }

    Result<std::string> get_value(const std::string& k, int src, Clock::time_point deadline) {
        struct GetOut {
            std::array<char, pmi2::kMaxValueChars + 1> buf{};
            int len = 0;
        };
        auto out = std::make_shared<GetOut>();
        SDDP_TRY(rc, s_->worker.call(
                         [s = s_, src, k, out] {
                             return s->api.kvs_get(s->jobid.c_str(), src, k.c_str(),
                                                   out->buf.data(),
                                                   static_cast<int>(out->buf.size()), &out->len);
                         },
                         deadline, "PMI2_KVS_Get"));
        const auto& buf = out->buf;
        const int len = out->len;
        if (rc != 0) {
            return fail(Errc::protocol, "PMI2_KVS_Get(" + k + ") from rank " + std::to_string(src) +
                                            " failed: " + code_text(rc));
        }
        if (len < 0 || static_cast<std::size_t>(len) > pmi2::kMaxValueChars) {
            return fail(Errc::protocol, "PMI2_KVS_Get(" + k + ") returned an oversized value");
        }
        return std::string(buf.data(), static_cast<std::size_t>(len));
    }

    Result<Bytes> get(std::uint64_t seq, int src, Clock::time_point deadline) override {
        SDDP_TRY(first_value, get_value(pmi2::key(seq, src, 0), src, deadline));
        SDDP_TRY(first, pmi2::decode_first(first_value, src));
        Bytes out = std::move(first.bytes);
        out.reserve(first.total);
        const std::size_t n = pmi2::chunk_count(first.total);
        for (std::size_t i = 1; i < n; ++i) {
            SDDP_TRY(v, get_value(pmi2::key(seq, src, i), src, deadline));
            SDDP_TRY(part, pmi2::decode_hex(v, src));
            out.insert(out.end(), part.begin(), part.end());
        }
        if (out.size() != first.total) {
            return fail(Errc::protocol, "the record from rank " + std::to_string(src) +
                                            " is truncated (" + std::to_string(out.size()) +
                                            " of " + std::to_string(first.total) + " bytes)");
        }
        return out;
    }

    // Every record's first value in one call on the worker (rank 0 of a gather reads N - 1:
    // a hand-off each cost two scheduler wake-ups on a loaded node); the rare records longer
    // than one value read their other values through get().
    Result<std::vector<Bytes>> get_many(std::uint64_t seq, const std::vector<int>& srcs,
                                        Clock::time_point deadline) override {
        struct Out {
            std::vector<std::string> values;
            std::vector<int> rc;
            std::size_t oversized = SIZE_MAX;  // the index whose value overflowed, if any
        };
        auto out = std::make_shared<Out>();
        out->values.resize(srcs.size());
        out->rc.assign(srcs.size(), 0);
        auto keys = std::make_shared<std::vector<std::string>>();
        keys->reserve(srcs.size());
        for (int src : srcs) keys->push_back(pmi2::key(seq, src, 0));
        auto ranks = std::make_shared<std::vector<int>>(srcs);
        SDDP_TRY(rc,
                 s_->worker.call(
                     [s = s_, keys, ranks, out] {
                         std::array<char, pmi2::kMaxValueChars + 1> buf{};
                         for (std::size_t i = 0; i < keys->size(); ++i) {
                             int len = 0;
                             out->rc[i] =
                                 s->api.kvs_get(s->jobid.c_str(), (*ranks)[i], (*keys)[i].c_str(),
                                                buf.data(), static_cast<int>(buf.size()), &len);
                             if (out->rc[i] != 0) return out->rc[i];
                             if (len < 0 || static_cast<std::size_t>(len) > pmi2::kMaxValueChars) {
                                 out->oversized = i;
                                 return -1;
                             }
                             out->values[i].assign(buf.data(), static_cast<std::size_t>(len));
                         }
                         return 0;
                     },
                     deadline, "PMI2_KVS_Get"));
        (void)rc;  // each get's own code is in out->rc
        std::vector<Bytes> records;
        records.reserve(srcs.size());
        for (std::size_t i = 0; i < srcs.size(); ++i) {
            const int src = srcs[i];
            const std::string& k = (*keys)[i];
            if (out->oversized == i)
                return fail(Errc::protocol, "PMI2_KVS_Get(" + k + ") returned an oversized value");
            if (out->rc[i] != 0) {
                return fail(Errc::protocol, "PMI2_KVS_Get(" + k + ") from rank " +
                                                std::to_string(src) +
                                                " failed: " + code_text(out->rc[i]));
            }
            SDDP_TRY(first, pmi2::decode_first(out->values[i], src));
            if (pmi2::chunk_count(first.total) > 1) {
                SDDP_TRY(whole, get(seq, src, deadline));
                records.push_back(std::move(whole));
                continue;
            }
            if (first.bytes.size() != first.total) {
                return fail(Errc::protocol, "the record from rank " + std::to_string(src) +
                                                " is truncated (" +
                                                std::to_string(first.bytes.size()) + " of " +
                                                std::to_string(first.total) + " bytes)");
            }
            records.push_back(std::move(first.bytes));
        }
        return records;
    }

    Pmi2Session* s_;
};

}  // namespace

bool pmi2_environment(const EnvLookup& env) {
    for (const char* n : {"PMI_FD", "PMI_RANK", "PMI_SIZE", "SLURM_JOB_ID"}) {
        auto v = env(n);
        if (!v || v->empty()) return false;
    }
    return true;
}

Result<std::unique_ptr<Transport>> make_pmi2_transport(const RendezvousConfig& cfg,
                                                       const EnvLookup& env) {
    const auto deadline = Clock::now() + cfg.timeout;
    auto s = session(env, deadline);
    if (!s) {
        return make_error(s.error().code, "PMI2 rendezvous, rank " + std::to_string(cfg.rank) +
                                              " on " + cfg.host + ": " + s.error().message);
    }
    // PMI2 numbers the tasks itself; a different numbering means the identity is not this step's.
    if ((*s)->size != 0 && ((*s)->rank != cfg.rank || (*s)->size != cfg.world_size)) {
        return make_error(Errc::invalid_input,
                          "PMI2 says this task is rank " + std::to_string((*s)->rank) + " of " +
                              std::to_string((*s)->size) + " but the identity says rank " +
                              std::to_string(cfg.rank) + " of " + std::to_string(cfg.world_size) +
                              " (host " + cfg.host +
                              "): the RANK/WORLD_SIZE variables do not belong to this srun step; "
                              "unset them or use " +
                              std::string(contract::kTransportVar) + "=tcp");
    }
    return std::unique_ptr<Transport>(new Pmi2Transport(cfg, *s));
}

}  // namespace sddp

// SPDX-License-Identifier: Apache-2.0
// slurm_ddp/bootstrap.hpp: a thin RAII wrapper over the C API (header only).
//
//     slurm_ddp::Session s;                 // throws slurm_ddp::Error on failure
//     ncclComm_t comm = slurm_ddp::nccl_comm(s);  // from slurm_ddp/nccl.hpp
//     ...                                   // the destructor finalizes; s.abort("why") aborts
//
// The C API never throws; this wrapper turns its status codes into exceptions because that is
// what C++ callers expect. Everything stays inline so the library's ABI remains the C one.
#pragma once

#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "slurm_ddp/bootstrap.h"

namespace slurm_ddp {

class Error : public std::runtime_error {
  public:
    Error(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
    int code() const noexcept { return code_; }  // an sddp_status value

  private:
    int code_;
};

enum class Transport {
    automatic = SDDP_TRANSPORT_AUTO,
    tcp = SDDP_TRANSPORT_TCP,
    pmi2 = SDDP_TRANSPORT_PMI2,
    pmix = SDDP_TRANSPORT_PMIX
};

struct Options {
    bool nccl = true;  // false: identity + rendezvous only
    Transport transport = Transport::automatic;
    long long timeout_ms = 0;  // 0: SLURM_DDP_TIMEOUT, else 300 s
    std::string master_addr;   // empty: MASTER_ADDR from the environment
    int master_port = 0;       // 0: MASTER_PORT from the environment
    bool local_comm = true;    // create the node-local communicator
    int nccl_unique_ids = 0;   // >1: ncclCommInitRankScalable
    // UNSAFE: the TCP rendezvous without SLURM_DDP_SECRET (see bootstrap.h).
    bool allow_unauthenticated = false;
};

class Session {
  public:
    explicit Session(const Options& o = Options()) {
        sddp_options c;
        sddp_options_init(&c);
        c.no_nccl = o.nccl ? 0 : 1;
        c.transport = static_cast<int>(o.transport);
        c.timeout_ms = o.timeout_ms;
        c.master_addr = o.master_addr.empty() ? nullptr : o.master_addr.c_str();
        c.master_port = o.master_port;
        c.no_local_comm = o.local_comm ? 0 : 1;
        c.nccl_unique_ids = o.nccl_unique_ids;
        c.allow_unauthenticated = o.allow_unauthenticated ? 1 : 0;
        check(sddp_init(&c, &h_));
    }
    ~Session() {
        if (h_) sddp_finalize(h_);
    }
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;
    Session(Session&& other) noexcept : h_(std::exchange(other.h_, nullptr)) {}
    Session& operator=(Session&& other) noexcept {
        if (this != &other) {
            if (h_) sddp_finalize(h_);
            h_ = std::exchange(other.h_, nullptr);
        }
        return *this;
    }

    // Explicit shutdown, reporting failure (the destructor cannot).
    void finalize() {
        if (h_) check(sddp_finalize(std::exchange(h_, nullptr)));
    }
    // Error path: ncclCommAbort and tell the peers; never throws.
    void abort(const char* reason = nullptr) noexcept {
        if (h_) sddp_abort(std::exchange(h_, nullptr), reason);
    }

    int rank() const { return sddp_rank(h_); }
    int world_size() const { return sddp_world_size(h_); }
    int local_rank() const { return sddp_local_rank(h_); }
    int local_world_size() const { return sddp_local_world_size(h_); }
    int node_rank() const { return sddp_node_rank(h_); }
    int num_nodes() const { return sddp_num_nodes(h_); }
    int cuda_device() const { return sddp_cuda_device(h_); }
    std::string transport_name() const { return sddp_transport_name(h_); }
    std::string identity_source() const { return sddp_identity_source(h_); }
    std::string host() const { return sddp_host(h_); }

    // ncclComm_t as void*; slurm_ddp/nccl.hpp has the typed forms.
    void* nccl_comm_ptr() const { return sddp_nccl_comm(h_); }
    void* nccl_local_comm_ptr() const { return sddp_nccl_local_comm(h_); }

    void broadcast(void* buf, std::size_t len, int root) {
        check(sddp_broadcast(h_, buf, len, root));
    }
    // Every rank's `len` bytes, rank r's at offset r * len.
    std::vector<unsigned char> allgather(const void* mine, std::size_t len) {
        std::vector<unsigned char> out(len * static_cast<std::size_t>(world_size()));
        check(sddp_allgather(h_, mine, len, out.data()));
        return out;
    }
    void barrier() { check(sddp_barrier(h_)); }

    sddp_handle* handle() const { return h_; }

  private:
    static void check(int rc) {
        if (rc != SDDP_OK) throw Error(rc, sddp_last_error());
    }
    sddp_handle* h_ = nullptr;
};

}  // namespace slurm_ddp

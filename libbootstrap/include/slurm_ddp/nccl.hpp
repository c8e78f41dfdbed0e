// SPDX-License-Identifier: Apache-2.0
// slurm_ddp/nccl.hpp: typed NCCL communicators of a slurm_ddp::Session.
//
//     #include <slurm_ddp/nccl.hpp>             // includes <nccl.h> and bootstrap.hpp
//     ncclComm_t comm = slurm_ddp::nccl_comm(s);
//
// A header of its own, so that the accessors exist whatever the include order (bootstrap.hpp
// alone offers the void* forms). The communicators are blocking: use them as with plain NCCL.
#pragma once

#include <nccl.h>

#include "slurm_ddp/bootstrap.hpp"

namespace slurm_ddp {

inline ncclComm_t nccl_comm(const Session& s) {
    return static_cast<ncclComm_t>(s.nccl_comm_ptr());
}

// nullptr when the session was created with local_comm = false or without NCCL.
inline ncclComm_t nccl_local_comm(const Session& s) {
    return static_cast<ncclComm_t>(s.nccl_local_comm_ptr());
}

}  // namespace slurm_ddp

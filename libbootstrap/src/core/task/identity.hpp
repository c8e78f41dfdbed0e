// SPDX-License-Identifier: Apache-2.0
// Identity: who this process is in the job, read from whatever launched it. Pure over EnvLookup.
//
// Sources, in order:
//   ddp     RANK / WORLD_SIZE (+ LOCAL_RANK, LOCAL_WORLD_SIZE, NODE_RANK or GROUP_RANK,
//           MASTER_ADDR, MASTER_PORT): set by `srun --ddp` or torchrun.
//   slurm   Slurm's own task variables when the plugin is absent: read_step_facts +
//           derive_launch_env, the very functions the plugin runs, so ranks and the master
//           address/port are what `srun --ddp` would have exported.
//   mpi     Open MPI's OMPI_COMM_WORLD_* or PMI's PMI_RANK / PMI_SIZE (mpirun, srun --mpi=pmi2).
//   single  none of the above: rank 0 of 1.
//
// One exception to that order, on purpose: when Slurm's variables and an MPI launcher's disagree
// about the world size, Slurm's describe the launcher's daemon step (mpirun starts its daemons
// with srun, one per node, and the ranks inherit the daemons' SLURM_PROCID), so the MPI
// variables win. When they agree (srun --mpi=pmi2) Slurm's are used, as they also give locality.
//
// Partial or inconsistent values are errors naming the variable and the value: never a guess.
// What is genuinely unknown stays unknown: without LOCAL_RANK/LOCAL_WORLD_SIZE (a bare RANK and
// WORLD_SIZE, PMI) each rank counts as alone on its node (locality_known = false), the node
// index is left empty, and the caller derives node membership from the preflight host names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/base/env_lookup.hpp"
#include "core/base/result.hpp"
#include "core/options/options.hpp"

namespace sddp {

enum class IdentitySource { ddp, slurm, mpi, single };
const char* to_string(IdentitySource source);

struct Identity {
    IdentitySource source = IdentitySource::single;
    std::string source_detail;  // e.g. "RANK/WORLD_SIZE", "OMPI_COMM_WORLD_*", for messages
    std::uint32_t rank = 0;
    std::uint32_t world_size = 1;
    bool locality_known = false;  // local_rank/local_world_size come from the launcher
    std::uint32_t local_rank = 0;
    std::uint32_t local_world_size = 1;
    std::optional<std::uint32_t> node_rank;  // node index, when the launcher says
    std::optional<std::uint32_t> num_nodes;
    std::optional<std::string> master_addr;
    std::optional<std::uint16_t> master_port;
    std::string step_tag;  // SLURM_DDP_STEP, else "<job>.<step>" or the MPI job id; may be empty
    std::string secret;    // raw bytes of SLURM_DDP_SECRET (32), empty when unset
    std::optional<int>
        device;  // SLURM_DDP_DEVICE: the GPU to use, relative to CUDA_VISIBLE_DEVICES
};

// Facts the caller gathers by I/O or takes from the API's options.
struct IdentityInputs {
    std::optional<std::string> master_addr;  // option: overrides MASTER_ADDR
    std::optional<std::uint16_t> master_port;
    // For derive_launch_env (slurm source): SLURM_HOSTFILE under --distribution=arbitrary.
    std::optional<std::string> hostfile_text;
    std::string hostfile_problem;
};

Result<Identity> detect_identity(const EnvLookup& env, const IdentityInputs& in);

// SLURM_DDP_TIMEOUT in seconds (kTimeoutParam's range) -> milliseconds; unset -> nullopt.
Result<std::optional<std::uint64_t>> read_timeout_ms(const EnvLookup& env);

}  // namespace sddp

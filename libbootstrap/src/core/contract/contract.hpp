// SPDX-License-Identifier: Apache-2.0
// The contract between the plugin (which sets these variables in each --ddp task) and the
// library (which reads them): every SLURM_DDP_* name and the secret's format, in one place.
// No other source file spells these names; tests/layers/check_layers.py (ctest layers_respected)
// checks that.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "core/base/env_lookup.hpp"
#include "core/base/result.hpp"

namespace sddp::contract {

// Per-step rendezvous secret, made by srun for each --ddp step (kSecretBytes raw bytes, written as
// 2 * kSecretBytes lower-case hex digits). Only tasks of that step know it.
inline constexpr const char* kSecretVar = "SLURM_DDP_SECRET";
inline constexpr std::size_t kSecretBytes = 32;
// "<job>.<step>": names the step to the rendezvous, so ranks of two steps never mix.
inline constexpr const char* kStepVar = "SLURM_DDP_STEP";
// The task's own GPU as an index into its CUDA_VISIBLE_DEVICES.
inline constexpr const char* kDeviceVar = "SLURM_DDP_DEVICE";
// Rendezvous timeout in seconds (--ddp=timeout=S).
inline constexpr const char* kTimeoutVar = "SLURM_DDP_TIMEOUT";
// "<first>-<last>": the step's block of ports, MASTER_PORT first (--ddp=ports=K).
inline constexpr const char* kPortsVar = "SLURM_DDP_PORTS";
// Workers of the whole step under --ddp=launcher (accelerate launch's --num_processes).
inline constexpr const char* kNumProcessesVar = "SLURM_DDP_NUM_PROCESSES";
// --ddp=hostfile: path of the step's `host slots=N` file on this node (removed when the step ends).
inline constexpr const char* kHostfileVar = "SLURM_DDP_HOSTFILE";
// tcp | pmi2 | pmix | auto: which transport the library uses.
inline constexpr const char* kTransportVar = "SLURM_DDP_TRANSPORT";
// "1": run the TCP rendezvous without a secret (unsafe; launches without Slurm only).
inline constexpr const char* kAllowUnauthenticatedVar = "SLURM_DDP_ALLOW_UNAUTHENTICATED";
// Path of the `slurm-ddp` binary that --ddp=check runs (default: where the package installs it).
inline constexpr const char* kCheckToolVar = "SLURM_DDP_CHECK_TOOL";
// Path of the PMIx library to load instead of libpmix.so.2.
inline constexpr const char* kPmixLibraryVar = "SLURM_DDP_PMIX_LIBRARY";
// The NCCL library to load instead of libnccl.so.2 (a SONAME or a path): librccl.so.1 for RCCL,
// NCCL's API on AMD GPUs, with the HIP runtime in place of the CUDA runtime.
inline constexpr const char* kNcclLibraryVar = "SLURM_DDP_NCCL_LIBRARY";
// Path of the PMI2 library to load instead of libpmi2.so.0.
inline constexpr const char* kPmi2LibraryVar = "SLURM_DDP_PMI2_LIBRARY";
// Path of the py-spy that `slurm-ddp stacks` uses for Python ranks: the caller's; run by a user
// also the rank's own, else found beside the rank's interpreter or on PATH (run as root, only
// the caller's and root's own PATH, and only where root alone can have put it).
inline constexpr const char* kPyspyVar = "SLURM_DDP_PYSPY";
// Where srun reads a --ddp value from its environment (sbatch exports `#SBATCH --ddp=X` this
// way to every srun of the script). "off" keeps a step out of DDP where the site turns it on for
// every step; an srun that has not loaded the plugin ignores it.
inline constexpr const char* kDdpOptionEnvVar = "SLURM_SPANK__SLURM_SPANK_OPTION_ddp_ddp";
// --ddp=debug: the step's debug directory, where the library writes the stacks of its node's
// tasks when its rendezvous times out.
inline constexpr const char* kDebugDirVar = "SLURM_DDP_DEBUG_DIR";
// Fanout k of the TCP rendezvous tree among node leaders (2..4096, default kTreeFanoutDefault):
// rank 0's node leads, node n's leader joins node (n-1)/k's. Every rank of a step must agree.
inline constexpr const char* kTreeFanoutVar = "SLURM_DDP_TREE_FANOUT";
// Names the rendezvous when one step runs several (--ddp=check's before the program's): it goes
// into the node-local socket's name, so no two rendezvous of a step share one. Empty: the
// program's own.
inline constexpr const char* kRendezvousRoundVar = "SLURM_DDP_RENDEZVOUS_ROUND";
// Runs of this job's program before this one, set for every --ddp task: the job's
// SLURM_RESTART_COUNT, or what `slurm-ddp run` set for each run of its step (the job's
// SLURM_RESTART_COUNT plus the restarts it made), together with kRestartsJobVar.
inline constexpr const char* kRestartsVar = "SLURM_DDP_RESTARTS";
// The job id kRestartsVar was set for. A task whose SLURM_JOB_ID equals it keeps kRestartsVar as
// `slurm-ddp run` set it; otherwise the value was inherited from elsewhere and is not this job's.
inline constexpr const char* kRestartsJobVar = "SLURM_DDP_RESTARTS_JOB";
inline constexpr int kTreeFanoutDefault = 16;

// The secret's value for the environment: hex of exactly kSecretBytes bytes (the caller made
// them with the randomness module).
std::string encode_secret(std::span<const std::uint8_t> raw);

// The secret's raw bytes from kSecretVar: "" when unset or empty; an error naming the variable
// (never its value) when malformed.
Result<std::string> read_secret(const EnvLookup& env);

}  // namespace sddp::contract

// SPDX-License-Identifier: Apache-2.0
// Variables for frameworks that describe the cluster themselves instead of MASTER_ADDR/PORT:
// `--ddp=jax` and `--ddp=tf`. Pure: the step's facts and the task's launch/binding in, variables
// out. A program of another framework only sees a few more variables.
//
// JAX 0.12 (jax/_src/distributed.py, jax/_src/clusters/slurm_cluster.py): initialize() with no
// arguments reads JAX_COORDINATOR_ADDRESS and JAX_LOCAL_DEVICE_IDS itself, and takes the process
// count and id from its Slurm detection (SLURM_NTASKS, SLURM_PROCID); it never reads
// JAX_NUM_PROCESSES / JAX_PROCESS_ID, which are set for programs that pass them explicitly.
// Without JAX_COORDINATOR_ADDRESS its Slurm detection derives one port per *job*
// (61440 + job id % 4096), so two JAX steps of one job collide; the step's MASTER_PORT does not.
// The coordinator takes MASTER_PORT itself: a JAX program opens no torch store there, and the
// rest of the block stays free for whatever else the step runs. Without JAX_LOCAL_DEVICE_IDS
// JAX would use SLURM_LOCALID as the device, which is wrong under gpu-bind=single.
//
// TensorFlow (MultiWorkerMirroredStrategy) reads TF_CONFIG: every worker's host:port in
// task.index order, and its own index. One worker per rank, index = RANK; rank r listens on
// MASTER_PORT + 1 + (r's position among its node's ranks), so MASTER_PORT stays free and no two
// workers of a node share a port. The block must therefore hold 1 + the most tasks on one node;
// with tf the default block grows to that (ports_needed_for), and a smaller ports=K is refused.
// Hosts are the step's node names in RANK order (never a sorted list: n10 comes after n2).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/env_lookup.hpp"
#include "core/base/result.hpp"
#include "core/options/options.hpp"
#include "core/slurm/step_facts.hpp"
#include "core/task/launch_env.hpp"

namespace sddp {

// JAX_COORDINATOR_ADDRESS=<MASTER_ADDR>:<MASTER_PORT>, JAX_NUM_PROCESSES, JAX_PROCESS_ID, and
// JAX_LOCAL_DEVICE_IDS=`device_index` when the task has a bound GPU (>= 0).
std::vector<EnvAssignment> jax_env(const LaunchEnv& launch, int device_index, bool override_env);

// The port block size --ddp=tf needs: MASTER_PORT plus one port per task on the busiest node.
std::uint32_t tf_ports_needed(const StepFacts& facts);

// TF_CONFIG for this task. Errors: a block too small, a layout not known from Slurm's variables
// (arbitrary distribution or heterogeneous step under rank-order=block), or a value larger than
// one environment variable may hold.
Result<EnvAssignment> tf_config_env(const StepFacts& facts, const LaunchEnv& launch,
                                    const StepOptions& opts);

const std::vector<std::string>& cluster_spec_variable_names();

}  // namespace sddp

// SPDX-License-Identifier: Apache-2.0
#include "core/task/cluster_spec_env.hpp"

#include <algorithm>
#include <cstdint>

#include "core/task/rank_order.hpp"

namespace sddp {
namespace {

// Linux refuses an execve whose single environment string exceeds MAX_ARG_STRLEN (32 pages).
constexpr std::size_t kMaxEnvString = 131072;

std::string json_string(std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

}  // namespace

std::vector<EnvAssignment> jax_env(const LaunchEnv& launch, int device_index, bool override_env) {
    std::vector<EnvAssignment> out;
    out.push_back({"JAX_COORDINATOR_ADDRESS",
                   launch.master_addr + ":" + std::to_string(launch.master_port), !override_env});
    out.push_back({"JAX_NUM_PROCESSES", std::to_string(launch.world_size), false});
    out.push_back({"JAX_PROCESS_ID", std::to_string(launch.rank), false});
    if (device_index >= 0)
        out.push_back({"JAX_LOCAL_DEVICE_IDS", std::to_string(device_index), false});
    return out;
}

std::uint32_t tf_ports_needed(const StepFacts& facts) {
    std::uint32_t most = 1;
    for (auto n : facts.tasks_per_node) most = std::max(most, n);
    return most + 1;
}

Result<EnvAssignment> tf_config_env(const StepFacts& f, const LaunchEnv& launch,
                                    const StepOptions& opts) {
    const std::uint32_t need = tf_ports_needed(f);
    const std::uint32_t have = std::uint32_t{launch.ports_last} - launch.master_port + 1;
    if (have < need) {
        return make_error(Errc::invalid_input,
                          "--ddp=tf needs " + std::to_string(need) +
                              " ports for the step (MASTER_PORT and one per task on the busiest "
                              "node) but the block " +
                              std::to_string(launch.master_port) + "-" +
                              std::to_string(launch.ports_last) + " has " + std::to_string(have) +
                              "; give --ddp=tf,ports=" + std::to_string(need) +
                              " (or srun --resv-ports=" + std::to_string(need) + ")");
    }
    auto layout = ordered_ranks_per_node(f, opts.rank_order);
    if (!layout) {
        return make_error(Errc::unsupported,
                          "--ddp=tf cannot list the workers: " + layout.error().message +
                              "; add rank-order=node (--ddp=tf,rank-order=node)");
    }
    // Worker address of each rank, in RANK order.
    std::vector<std::string> workers(f.ntasks);
    const std::string& suffix = opts.addr_suffix;
    for (std::size_t n = 0; n < layout->size(); ++n) {
        const auto& ranks = (*layout)[n];
        for (std::size_t l = 0; l < ranks.size(); ++l) {
            if (ranks[l] >= workers.size()) continue;
            workers[ranks[l]] =
                f.nodes.at(n) + suffix + ":" + std::to_string(launch.master_port + 1 + l);
        }
    }
    std::string json = "{\"cluster\":{\"worker\":[";
    for (std::size_t r = 0; r < workers.size(); ++r) {
        if (r > 0) json += ",";
        json += json_string(workers[r]);
        if (json.size() > kMaxEnvString) break;
    }
    json += "]},\"task\":{\"type\":\"worker\",\"index\":" + std::to_string(launch.rank) + "}}";
    if (json.size() + 10 > kMaxEnvString) {
        return make_error(Errc::too_large,
                          "--ddp=tf: TF_CONFIG for " + std::to_string(f.ntasks) +
                              " workers is longer than one environment variable may be (" +
                              std::to_string(kMaxEnvString) +
                              " bytes); run fewer tasks per step or build the cluster spec in the "
                              "program (tf.distribute.cluster_resolver.SlurmClusterResolver)");
    }
    return EnvAssignment{"TF_CONFIG", std::move(json), false};
}

const std::vector<std::string>& cluster_spec_variable_names() {
    static const std::vector<std::string> kNames{"JAX_COORDINATOR_ADDRESS", "JAX_NUM_PROCESSES",
                                                 "JAX_PROCESS_ID", "JAX_LOCAL_DEVICE_IDS",
                                                 "TF_CONFIG"};
    return kNames;
}

}  // namespace sddp

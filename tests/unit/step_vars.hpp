// SPDX-License-Identifier: Apache-2.0
// One task of a Slurm step as the unit tests build it: the SLURM_* variables a task sees, read
// into StepFacts the way the plugin and `slurm-ddp env` read them, and the options from --ddp text.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/base/env_lookup.hpp"
#include "core/options/options.hpp"
#include "core/slurm/step_facts.hpp"
#include "core/task/launch_env.hpp"

namespace sddp::unit {

using Vars = std::map<std::string, std::string, std::less<>>;

inline Vars task(std::uint32_t procid, std::uint32_t localid, std::uint32_t nodeid,
                 std::uint32_t ntasks, const std::string& nodelist, std::uint32_t nnodes,
                 const std::string& per_node, const std::string& nodename,
                 const std::string& dist = "block") {
    return Vars{{"SLURM_JOB_ID", "1234"},
                {"SLURM_STEP_ID", "3"},
                {"SLURM_PROCID", std::to_string(procid)},
                {"SLURM_LOCALID", std::to_string(localid)},
                {"SLURM_NODEID", std::to_string(nodeid)},
                {"SLURM_STEP_NUM_TASKS", std::to_string(ntasks)},
                {"SLURM_STEP_NUM_NODES", std::to_string(nnodes)},
                {"SLURM_STEP_NODELIST", nodelist},
                {"SLURM_STEP_TASKS_PER_NODE", per_node},
                {"SLURMD_NODENAME", nodename},
                {"SLURM_DISTRIBUTION", dist}};
}

inline StepFacts facts_of(const Vars& v) {
    auto f = read_step_facts(map_env(v));
    EXPECT_TRUE(f.ok()) << f.error().message;
    return *f;
}

inline std::map<std::string, std::string> as_map(const std::vector<EnvAssignment>& vars) {
    std::map<std::string, std::string> m;
    for (const auto& v : vars) m[v.name] = v.value;
    return m;
}

// --ddp=`text` as parsed: the options as given.
inline DdpOptions given_of(const char* text) {
    auto o = parse_user_options(text);
    EXPECT_TRUE(o.ok()) << o.error().message;
    return o.ok() ? *o : DdpOptions{};
}

// The options in force for a step run with --ddp=`text` where the site sets nothing.
inline StepOptions opts_of(const char* text) {
    return merge_options(DdpOptions{}, given_of(text));
}

}  // namespace sddp::unit

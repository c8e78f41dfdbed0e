// SPDX-License-Identifier: Apache-2.0
#include "core/gpu/slurm_task_gpus.hpp"

#include <string>
#include <vector>

#include "core/base/numbers.hpp"

namespace sddp {
namespace {

std::vector<std::string> split(std::string_view text) {
    std::vector<std::string> out;
    while (true) {
        const auto comma = text.find(',');
        out.emplace_back(text.substr(0, comma));
        if (comma == std::string_view::npos) return out;
        text.remove_prefix(comma + 1);
    }
}

std::string join(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : ",") + i;
    return out;
}

// Positions in the step's lists of the GPUs Slurm gives local rank `k`, or nullopt.
std::optional<std::vector<std::size_t>> positions_for(std::string_view rule,
                                                      const std::vector<std::string>& step_gpus,
                                                      int k) {
    const auto rank = static_cast<std::size_t>(k);
    if (rule.substr(0, 9) == "per_task:") {
        const auto n = parse_decimal(rule.substr(9), 1u << 10);
        if (!n || *n == 0 || (rank + 1) * *n > step_gpus.size()) return std::nullopt;
        std::vector<std::size_t> out;
        for (std::size_t i = rank * *n; i < (rank + 1) * *n; ++i) out.push_back(i);
        return out;
    }
    if (rule.substr(0, 8) == "map_gpu:") {
        // Plain global indices only; "1*2" repeat counts and masks are left unknown.
        const auto map = split(rule.substr(8));
        const std::string& global = map[rank % map.size()];
        for (std::size_t i = 0; i < step_gpus.size(); ++i)
            if (step_gpus[i] == global) return std::vector<std::size_t>{i};
    }
    return std::nullopt;
}

std::optional<SlurmGpuEnv> narrowed_for(const SlurmGpuEnv& s, std::string_view rule, int k) {
    const auto visible = split(*s.step_visible);
    const auto gpus = split(*s.step_gpus);
    if (visible.size() != gpus.size()) return std::nullopt;
    const auto at = positions_for(rule, gpus, k);
    if (!at) return std::nullopt;
    std::vector<std::string> v, g;
    for (std::size_t i : *at) {
        v.push_back(visible[i]);
        g.push_back(gpus[i]);
    }
    SlurmGpuEnv out = s;
    out.task_visible = join(v);
    if (out.task_ordinal) out.task_ordinal = join(v);
    out.task_gpus = join(g);
    return out;
}

}  // namespace

std::optional<SlurmGpuEnv> slurm_task_gpus(const SlurmGpuEnv& s, std::string_view tres_bind,
                                           int own_local_rank, int local_rank) {
    if (!s.step_visible || !s.step_gpus || !s.task_visible) return std::nullopt;
    // "gpu:per_task:1" (one TRES); other TRES (a "+" list) leave the GPUs to the rule above.
    std::string_view rule = tres_bind.substr(0, tres_bind.find('+'));
    if (rule.substr(0, 4) != "gpu:") return std::nullopt;
    rule.remove_prefix(4);
    const auto own = narrowed_for(s, rule, own_local_rank);
    if (!own || own->task_visible != s.task_visible) return std::nullopt;
    return narrowed_for(s, rule, local_rank);
}

}  // namespace sddp

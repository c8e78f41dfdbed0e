// SPDX-License-Identifier: Apache-2.0
#include "stacks/stacks_slurm.hpp"

#include <algorithm>
#include <cctype>

#include "core/base/numbers.hpp"

namespace sddp::stacks {
namespace {

bool all_digits(std::string_view s) {
    return !s.empty() && s.size() <= 18 && std::all_of(s.begin(), s.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) != 0;
    });
}

}  // namespace

Result<StepTarget> parse_step_target(std::string_view text) {
    const auto dot = text.find('.');
    const auto job = text.substr(0, dot);
    const auto step = dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
    if (!all_digits(job) || (dot != std::string_view::npos && !all_digits(step))) {
        return make_error(Errc::invalid_input,
                          quote_value(text) +
                              " is not a job step; give JOBID or JOBID.STEPID, e.g. 1234 or "
                              "1234.0 (squeue -s lists the running steps)");
    }
    StepTarget t{std::string(job), std::nullopt};
    if (dot != std::string_view::npos) t.step = std::string(step);
    return t;
}

std::vector<StepInfo> parse_show_step(std::string_view text) {
    std::vector<StepInfo> out;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        StepInfo s;
        bool named = false;
        while (!line.empty()) {
            const auto sp = line.find(' ');
            const std::string_view word = line.substr(0, sp);
            line.remove_prefix(sp == std::string_view::npos ? line.size() : sp + 1);
            const auto eq = word.find('=');
            if (eq == std::string_view::npos) continue;
            const auto key = word.substr(0, eq);
            const std::string value(word.substr(eq + 1));
            if (key == "StepId") {
                const auto dot = value.find('.');
                if (dot == std::string::npos) break;
                s.job = value.substr(0, dot);
                s.step = value.substr(dot + 1);
                named = true;
            } else if (key == "NodeList") {
                s.nodelist = value;
            } else if (key == "Tasks") {
                s.tasks = value;
            } else if (key == "State") {
                s.state = value;
            }
        }
        if (named) out.push_back(std::move(s));
    }
    return out;
}

std::vector<ListedPid> parse_listpids(std::string_view text, std::string_view job,
                                      std::string_view step) {
    std::vector<ListedPid> out;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        std::vector<std::string_view> words;
        while (!line.empty()) {
            const auto start = line.find_first_not_of(" \t\r");
            if (start == std::string_view::npos) break;
            line.remove_prefix(start);
            const auto end = line.find_first_of(" \t\r");
            words.push_back(line.substr(0, end));
            line.remove_prefix(end == std::string_view::npos ? line.size() : end);
        }
        if (words.size() != 5 || words[1] != job || words[2] != step) continue;
        const auto pid = parse_decimal(words[0], 1u << 30);
        if (!pid || *pid == 0) continue;
        ListedPid p{static_cast<int>(*pid), std::nullopt};
        if (const auto g = parse_decimal(words[4], 1u << 30)) p.global_id = static_cast<long>(*g);
        out.push_back(p);
    }
    return out;
}

Result<StepInfo> pick_step(const std::vector<StepInfo>& steps, const StepTarget& target) {
    const StepInfo* best = nullptr;
    std::string others;
    for (const auto& s : steps) {
        if (s.job != target.job) continue;
        if (target.step) {
            if (s.step == *target.step) return s;
        } else if (all_digits(s.step)) {
            if (!best || std::stoull(s.step) > std::stoull(best->step)) best = &s;
        }
        others += (others.empty() ? "" : ", ") + s.job + "." + s.step;
    }
    if (best) return *best;
    const std::string asked = target.job + (target.step ? "." + *target.step : std::string());
    return make_error(Errc::missing_input,
                      "job " + asked + " has no running step to dump" +
                          (others.empty() ? std::string(" (it is not running, or does not exist)")
                                          : " (it has " + others + ")") +
                          "; squeue -s lists the running steps");
}

}  // namespace sddp::stacks

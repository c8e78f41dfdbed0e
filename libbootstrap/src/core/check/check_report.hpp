// SPDX-License-Identifier: Apache-2.0
// How rank 0 of `slurm-ddp check` prints the step's verdict: a table or JSON. Pure.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/check/check_record.hpp"
#include "core/check/check_verdict.hpp"

namespace sddp {

// The table rank 0 prints: rank, host, MASTER_ADDR and what it resolved to, interface, GPU,
// verdict; then one line per problem and the one-line verdict.
std::string format_check_report(const std::vector<CheckRecord>& all,
                                const std::vector<CheckProblem>& problems);
std::string format_check_json(const std::vector<CheckRecord>& all,
                              const std::vector<CheckProblem>& problems,
                              const std::optional<std::string>& exchange_error);
std::string verdict_line(std::size_t ranks, const std::vector<CheckProblem>& problems);
std::string json_quote(const std::string& s);

}  // namespace sddp

// SPDX-License-Identifier: Apache-2.0
#include "core/task/requeue_marker.hpp"

#include <algorithm>

#include "core/base/numbers.hpp"
#include "core/slurm/hostlist.hpp"

namespace sddp {
namespace {

constexpr std::string_view kPrefix = "requeue.";
constexpr std::size_t kMaxNodeName = 64;

bool valid_node_name(std::string_view node) {
    return !node.empty() && node.size() <= kMaxNodeName &&
           std::all_of(node.begin(), node.end(), [](char c) {
               return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-';
           });
}

// The next dot-separated number of `rest`, consumed with its dot.
std::optional<std::uint32_t> take_number(std::string_view& rest) {
    const auto dot = rest.find('.');
    if (dot == std::string_view::npos) return std::nullopt;
    const auto n = parse_decimal(rest.substr(0, dot), UINT32_MAX);
    if (!n) return std::nullopt;
    rest.remove_prefix(dot + 1);
    return static_cast<std::uint32_t>(*n);
}

}  // namespace

Result<std::string> requeue_marker_name(const RequeueMarker& marker) {
    if (!valid_node_name(marker.node)) {
        return make_error(Errc::invalid_input,
                          "SLURMD_NODENAME=" + quote_value(marker.node) +
                              " cannot name a requeue marker: a node name of 1 to 64 letters, "
                              "digits, '.', '_' or '-' is needed");
    }
    return std::string(kPrefix) + std::to_string(marker.job_id) + "." +
           std::to_string(marker.restart_count) + "." + marker.node;
}

std::optional<RequeueMarker> parse_requeue_marker_name(std::string_view name) {
    if (name.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
    name.remove_prefix(kPrefix.size());
    RequeueMarker m;
    const auto job = take_number(name);
    const auto run = job ? take_number(name) : std::nullopt;
    if (!run || !valid_node_name(name)) return std::nullopt;
    m.job_id = *job;
    m.restart_count = *run;
    m.node = std::string(name);
    return m;
}

std::uint32_t restart_count_of(std::optional<std::string_view> slurm_restart_count) {
    if (!slurm_restart_count) return 0;
    return static_cast<std::uint32_t>(parse_decimal(*slurm_restart_count, UINT32_MAX).value_or(0));
}

bool is_first_node_of_job(std::string_view job_nodelist, std::string_view node) {
    const auto first = first_hostlist_host(job_nodelist);
    return first && !node.empty() && *first == node;
}

}  // namespace sddp

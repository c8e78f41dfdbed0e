// SPDX-License-Identifier: Apache-2.0
#include "run/run_args.hpp"

#include <charconv>
#include <cstdint>
#include <optional>

#include "core/slurm/hostlist.hpp"

namespace sddp::run {
namespace {

std::optional<std::uint32_t> parse_count(std::string_view text) {
    std::uint32_t v = 0;
    const char* end = text.data() + text.size();
    auto [p, ec] = std::from_chars(text.data(), end, v);
    if (text.empty() || ec != std::errc() || p != end) return std::nullopt;
    return v;
}

Error usage(std::string message) {
    return make_error(Errc::invalid_input, std::move(message));
}

// An option that takes a value, in any of srun's spellings: "-N2", "-N 2", "--nodes=2",
// "--nodes 2". Returns the value and advances i past it, or nullopt when args[i] is not it.
struct ValueOption {
    std::string_view short_name;  // "-N"
    std::string_view long_name;   // "--nodes"
};

Result<std::optional<std::string>> take_value(const std::vector<std::string>& args, std::size_t& i,
                                              ValueOption opt) {
    const std::string& a = args[i];
    if (a == opt.short_name || a == opt.long_name) {
        if (i + 1 >= args.size() || args[i + 1] == "--") {
            return usage(std::string(opt.long_name) + " needs a value (e.g. " +
                         std::string(opt.short_name) + " 2)");
        }
        return std::optional<std::string>(args[++i]);
    }
    if (a.size() > opt.short_name.size() &&
        a.compare(0, opt.short_name.size(), opt.short_name) == 0 && a.compare(0, 2, "--") != 0) {
        return std::optional<std::string>(a.substr(opt.short_name.size()));
    }
    const std::string with_eq = std::string(opt.long_name) + "=";
    if (a.compare(0, with_eq.size(), with_eq) == 0) {
        return std::optional<std::string>(a.substr(with_eq.size()));
    }
    return std::optional<std::string>();
}

bool is_option(const std::string& a, std::string_view short_name, std::string_view long_name) {
    if (a == short_name || a == long_name) return true;
    if (a.compare(0, long_name.size() + 1, std::string(long_name) + "=") == 0) return true;
    return a.size() > short_name.size() && a.compare(0, 2, "--") != 0 &&
           a.compare(0, short_name.size(), short_name) == 0;
}

}  // namespace

Result<NodeRange> parse_node_range(std::string_view text) {
    const auto dash = text.find('-');
    const auto lo = parse_count(text.substr(0, dash));
    const auto hi = dash == std::string_view::npos ? lo : parse_count(text.substr(dash + 1));
    if (!lo || !hi || *lo == 0 || *hi < *lo) {
        return usage("-N/--nodes='" + std::string(text) +
                     "' is not a node count: give -N COUNT or -N MIN-MAX with 1 <= MIN <= MAX "
                     "(e.g. -N2, or -N2-3 to take a third node while one is left)");
    }
    return NodeRange{*lo, *hi};
}

Result<RunRequest> parse_run_args(const std::vector<std::string>& args) {
    RunRequest req;
    bool have_nodes = false;
    bool have_separator = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--") {
            req.program.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
            have_separator = true;
            break;
        }
        if (a == "-h" || a == "--help") {
            req.help = true;
            return req;
        }
        const auto restarts = take_value(args, i, {"--restarts", "--restarts"});
        if (!restarts) return restarts.error();
        if (*restarts) {
            const auto n = parse_count(**restarts);
            if (!n || *n > kMaxRestarts) {
                return usage("--restarts='" + **restarts + "' is not a count from 0 to " +
                             std::to_string(kMaxRestarts) +
                             ": give the most times to start the program again (e.g. "
                             "--restarts=2)");
            }
            req.restarts = *n;
            continue;
        }
        const auto nodes = take_value(args, i, {"-N", "--nodes"});
        if (!nodes) return nodes.error();
        if (*nodes) {
            const auto range = parse_node_range(**nodes);
            if (!range) return range.error();
            req.nodes = *range;
            req.nodes_text = **nodes;
            have_nodes = true;
            continue;
        }
        SDDP_TRY(exclude, take_value(args, i, {"-x", "--exclude"}));
        if (exclude) {
            if (exclude->find('/') != std::string::npos) {
                return usage("-x/--exclude='" + *exclude +
                             "' names a file; slurm-ddp run needs the node names (e.g. -x n3)");
            }
            auto hosts = expand_hostlist(*exclude);
            if (!hosts) return usage("-x/--exclude: " + hosts.error().message);
            req.excluded.insert(req.excluded.end(), hosts->begin(), hosts->end());
            req.excluded_text += (req.excluded_text.empty() ? "" : ",") + *exclude;
            continue;
        }
        for (const auto& [s, l] : {std::pair{"-w", "--nodelist"}, std::pair{"-F", "--nodefile"},
                                   std::pair{"-r", "--relative"}}) {
            if (is_option(a, s, l)) {
                return usage(std::string(s) + "/" + l + " ('" + a +
                             "') fixes the nodes of the step, so a failed node could not be left "
                             "out: give -N COUNT (and -x NODES for nodes never to use) instead");
            }
        }
        if (a == "--ddp" || a.rfind("--ddp=", 0) == 0) req.has_ddp = true;
        if (is_option(a, "-K", "--kill-on-bad-exit")) req.has_kill_on_bad_exit = true;
        if (is_option(a, "-n", "--ntasks")) req.has_ntasks = true;
        if (is_option(a, "-e", "--error") || is_option(a, "-o", "--output") || a == "--pty" ||
            a.rfind("--pty=", 0) == 0) {
            req.has_own_stderr = true;
        }
        req.srun_options.push_back(a);
    }
    if (!have_separator || req.program.empty()) {
        return usage("no program: give it after '--' (slurm-ddp run --restarts=1 -N2 -- ./train)");
    }
    if (!have_nodes) {
        return usage(
            "no node count: give the step's -N/--nodes (e.g. -N2 in an allocation of 3 "
            "nodes, so that one is spare for a restart)");
    }
    return req;
}

}  // namespace sddp::run

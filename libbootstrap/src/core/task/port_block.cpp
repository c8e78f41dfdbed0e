// SPDX-License-Identifier: Apache-2.0
#include "core/task/port_block.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>

#include "core/base/numbers.hpp"
#include "core/options/option_params.hpp"

namespace sddp {
namespace {

// splitmix64's finaliser: neighbouring and congruent job ids map to unrelated values.
std::uint64_t mix64(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

Result<PortBlock> block_from(std::uint32_t first, std::uint32_t size, PortSource source,
                             const std::string& what) {
    const std::uint32_t last = first + size - 1;
    if (last > 65535) {
        return make_error(Errc::invalid_input,
                          what + " " + std::to_string(first) + " leaves no room for a block of " +
                              std::to_string(size) + " ports (the last would be " +
                              std::to_string(last) +
                              " > 65535); choose a lower port or a "
                              "smaller --ddp=ports=K");
    }
    return PortBlock{static_cast<std::uint16_t>(first), static_cast<std::uint16_t>(last), source};
}

// The first run of consecutive ports in Slurm's list ("12000-12003", "12000", "12000,12001").
Result<PortRange> first_reserved_run(std::string_view text) {
    auto bad = [&] {
        return make_error(Errc::invalid_input,
                          "SLURM_STEP_RESV_PORTS=" + quote_value(text) +
                              " is not a port list like 12000-12003; check MpiParams=ports= in "
                              "slurm.conf, or give --ddp=port=N");
    };
    std::optional<PortRange> run;
    std::string_view rest = text;
    while (!rest.empty()) {
        const auto comma = rest.find(',');
        const auto item = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
        const auto dash = item.find('-');
        const auto lo = parse_decimal(item.substr(0, dash), 65535);
        const auto hi =
            dash == std::string_view::npos ? lo : parse_decimal(item.substr(dash + 1), 65535);
        if (!lo || !hi || *lo == 0 || *lo > *hi) return bad();
        if (!run) {
            run = PortRange{static_cast<std::uint16_t>(*lo), static_cast<std::uint16_t>(*hi)};
        } else if (*lo == std::uint64_t{run->last} + 1) {
            run->last = static_cast<std::uint16_t>(*hi);
        } else {
            break;  // the run ends; later ports are not consecutive with MASTER_PORT
        }
    }
    if (!run) return bad();
    return *run;
}

}  // namespace

const char* to_string(PortSource source) {
    switch (source) {
        case PortSource::option:
            return "option";
        case PortSource::reserved:
            return "reserved";
        case PortSource::derived:
            return "derived";
        case PortSource::user:
            return "user";
    }
    return "?";
}

std::string port_block_text(const PortBlock& b) {
    return std::to_string(b.first) + "-" + std::to_string(b.last);
}

Result<PortBlock> choose_port_block(const PortBlockInput& in, const StepOptions& opts) {
    const std::uint32_t k = opts.ports.value_or(std::max(kPortsParam.value, in.min_size));
    if (k < kPortsParam.min || k > kPortsParam.max) {
        return make_error(Errc::invalid_input, "ports=" + std::to_string(k) + "; expected " +
                                                   std::to_string(kPortsParam.min) + " to " +
                                                   std::to_string(kPortsParam.max));
    }
    if (k < in.min_size) {
        return make_error(Errc::invalid_input,
                          "ports=" + std::to_string(k) + " is too few for " +
                              std::string(in.min_size_for) + ", which needs " +
                              std::to_string(in.min_size) +
                              " (MASTER_PORT and one per task on the busiest node); give ports=" +
                              std::to_string(in.min_size) + " or more");
    }
    if (in.user_port)
        return block_from(*in.user_port, k, PortSource::user, "MASTER_PORT (exported by you)");
    if (opts.port) return block_from(*opts.port, k, PortSource::option, "--ddp=port=");
    if (in.resv_ports && !in.resv_ports->empty()) {
        SDDP_TRY(run, first_reserved_run(*in.resv_ports));
        const std::uint32_t have = std::uint32_t{run.last} - run.first + 1;
        // Where MpiParams=ports= is set, Slurm reserves a few ports for every step unasked. With
        // the default size the block is what Slurm reserved; a size someone asked for is a promise
        // to the program, so fewer is an error.
        if (have < k && !opts.ports && have >= in.min_size) {
            return PortBlock{run.first, run.last, PortSource::reserved};
        }
        if (have < k) {
            return make_error(Errc::invalid_input,
                              "SLURM_STEP_RESV_PORTS=" + quote_value(*in.resv_ports) +
                                  " reserves " + std::to_string(have) +
                                  " consecutive port(s) for the step, and --ddp needs " +
                                  std::to_string(k) + " (ports=" + std::to_string(k) +
                                  "); run srun with --resv-ports=" + std::to_string(k) +
                                  ", or give --ddp=ports=" + std::to_string(have));
        }
        return PortBlock{run.first, static_cast<std::uint16_t>(run.first + k - 1),
                         PortSource::reserved};
    }
    const PortRange range = opts.port_range;
    const std::uint64_t slots = (std::uint64_t{range.last} - range.first + 1) / k;
    if (slots == 0) {
        return make_error(Errc::invalid_input, "the port range " + std::to_string(range.first) +
                                                   "-" + std::to_string(range.last) +
                                                   " holds no block of " + std::to_string(k) +
                                                   " ports; widen the plugin argument port-range= "
                                                   "or give a smaller --ddp=ports=K");
    }
    const std::uint64_t slot = (mix64(in.job_id) + in.step_id) % slots;
    const auto first = static_cast<std::uint16_t>(range.first + slot * k);
    return PortBlock{first, static_cast<std::uint16_t>(first + k - 1), PortSource::derived};
}

Status master_port_status(std::uint16_t port, PortSource source, int bind_errno) {
    if (bind_errno == 0) return ok_status();
    const std::string what = "MASTER_PORT=" + std::to_string(port) + " (" + to_string(source) +
                             ") cannot be used on rank 0's node: ";
    if (bind_errno == EADDRINUSE) {
        return make_error(
            Errc::io, what +
                          "another process holds it; give a free port with --ddp=port=N, or "
                          "let Slurm reserve one with srun --resv-ports (needs MpiParams=ports= "
                          "in slurm.conf)");
    }
    return make_error(Errc::io, what + "binding it failed with errno " +
                                    std::to_string(bind_errno) +
                                    "; give another port with --ddp=port=N");
}

}  // namespace sddp

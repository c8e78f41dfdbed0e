// SPDX-License-Identifier: Apache-2.0
// The `--ddp[=options]` value and the plugin arguments in plugstack.conf.
//
// Both use one grammar, `key[=value]` items separated by commas (plugin arguments may also be
// separate words), and one table of keys, so a site default and a user option are validated by
// the same code. Unknown keys, bad values and conflicting pairs are errors that name the item
// and list what is valid: srun refuses to launch rather than guess.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace sddp {

struct PortRange {
    std::uint16_t first = 0;
    std::uint16_t last = 0;  // inclusive
    bool operator==(const PortRange&) const = default;
};

inline constexpr PortRange kDefaultPortRange{20000, 29999};
inline constexpr std::uint32_t kDefaultTimeoutSeconds = 300;

// Every field is optional so that a user option can override a site default field by field.
struct DdpOptions {
    std::optional<bool> enabled;             // user: on / off (site: default=on|off)
    std::optional<std::uint16_t> port;       // port=N: fixed MASTER_PORT
    std::optional<std::string> addr;         // addr=HOST: fixed MASTER_ADDR
    std::optional<std::string> addr_suffix;  // addr-suffix=S: first host + S (fabric names)
    std::optional<std::string> gpu_bind;     // gpu-bind=local|single|closest|none
    std::optional<bool> gpu_share;           // allow more tasks than GPUs on a node
    std::optional<bool> nccl_hints;          // net-hints (alias nccl-hints): NCCL_*, GLOO_* hints
    std::optional<bool> verbose;             // rank 0 prints the mapping table
    std::optional<bool> check;               // run `slurm-ddp check` before the program
    std::optional<bool> override_env;        // overwrite user-exported MASTER_ADDR/PORT
    std::optional<std::uint32_t> timeout_s;  // rendezvous timeout for libbootstrap
    std::optional<PortRange> port_range;     // site only: where derived ports fall
    std::optional<bool> launcher;            // one task per node runs torchrun/accelerate/...
    std::optional<std::uint32_t> nproc;      // nproc=N: workers per node under launcher
    std::optional<bool> torchelastic;        // TORCHELASTIC_* markers (torchrun-launched)
    std::optional<std::string> rank_order;   // rank-order=block|node
    std::optional<std::uint32_t> ports;      // ports=K: size of the step's port block
    std::optional<bool> debug;               // debug[=DIR]: NCCL/torch diagnostics
    std::optional<std::string> debug_dir;    // debug=DIR (relative: to SLURM_SUBMIT_DIR)
};

inline constexpr std::uint32_t kDefaultPortBlock = 4;
inline constexpr std::uint32_t kMaxPortBlock = 256;
inline constexpr std::uint32_t kMaxNproc = 1024;

// The value of `--ddp`: nullptr/empty/"(null)" (a bare `#SBATCH --ddp`) mean "on, defaults".
Result<DdpOptions> parse_user_options(std::string_view optarg);
// Plugin arguments from plugstack.conf (argv of slurm_spank_init).
Result<DdpOptions> parse_site_arguments(const std::vector<std::string>& args);
// Site defaults first, then the user's choices on top.
DdpOptions merge_options(const DdpOptions& site, const DdpOptions& user);
// Canonical text of the options, for logs and the verbose table.
std::string describe_options(const DdpOptions& opts);

inline constexpr const char* kGpuBindPolicies[] = {"local", "single", "closest", "none"};
inline constexpr const char* kRankOrders[] = {"block", "node"};

}  // namespace sddp

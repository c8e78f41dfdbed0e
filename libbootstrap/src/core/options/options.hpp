// SPDX-License-Identifier: Apache-2.0
// The `--ddp[=options]` value and the plugin arguments in plugstack.conf.
//
// Both use one grammar, `key[=value]` items separated by commas (plugin arguments may also be
// separate words), and one table of keys (option_table(), in options.cpp), so a site default and
// a user option are validated by the same code. Each option is declared once there, NCCL_PARAM
// style: its name, where it may appear, its type and range, its default, its help text, the
// variables it sets and the field it fills. The parser, the merge of site and user options, the
// canonical description, `--ddp=help`, `slurm-ddp options` and the docs test all read that row.
// Unknown keys, bad values and conflicting pairs are errors that name the item and list what is
// valid: srun refuses to launch rather than guess.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/base/result.hpp"
#include "core/options/option_params.hpp"

namespace sddp {

struct PortRange {
    std::uint16_t first = 0;
    std::uint16_t last = 0;  // inclusive
    bool operator==(const PortRange&) const = default;
};

// The enumerators are in the order of the values their table row lists.
enum class GpuBindPolicy {
    local,    // all of the step's node GPUs visible, own GPU at index LOCAL_RANK (default)
    single,   // only the own GPU visible, at index 0
    closest,  // like local, own GPU chosen nearest the task's CPUs (when Slurm did not choose)
    none,     // leave Slurm's variables untouched
};
enum class RankOrder { block, node };
// Which --ddp steps fail fast: those whose user asked for --ddp, or also those only the site
// default (default=on) turned on.
enum class FailFastScope { asked, all };

const char* to_string(GpuBindPolicy policy);
const char* to_string(RankOrder order);
const char* to_string(FailFastScope scope);

// The defaults of the options whose type is declared here (numbers: option_params.hpp). Each is
// also its row's default_value, which --ddp=help and the docs print.
inline constexpr PortRange kDefaultPortRange{20000, 29999};
inline constexpr GpuBindPolicy kDefaultGpuBind = GpuBindPolicy::local;
inline constexpr RankOrder kDefaultRankOrder = RankOrder::block;
inline constexpr FailFastScope kDefaultFailFast = FailFastScope::asked;
inline constexpr std::uint32_t kMaxNproc = 1024;
// debug without =DIR: the directory, relative to SLURM_SUBMIT_DIR (core/task/debug_env.hpp).
inline constexpr const char* kDefaultDebugDir = "slurm-ddp-debug";

// The options as given: every field is optional so that a user option can override a site
// default field by field. Only the parser and the merge read these; consumers get StepOptions.
struct DdpOptions {
    std::optional<bool> enabled;             // user: on / off (site: default=on|off)
    std::optional<std::uint16_t> port;       // port=N: fixed MASTER_PORT
    std::optional<std::string> addr;         // addr=HOST: fixed MASTER_ADDR
    std::optional<std::string> addr_suffix;  // addr-suffix=S: first host + S (fabric names)
    std::optional<GpuBindPolicy> gpu_bind;   // gpu-bind=local|single|closest|none
    std::optional<bool> gpu_share;           // allow more tasks than GPUs on a node
    std::optional<bool> nccl_hints;          // net-hints (alias nccl-hints): NCCL_*, GLOO_*
    std::optional<bool> verbose;             // rank 0 prints the mapping table
    std::optional<bool> check;               // run `slurm-ddp check` before the program
    std::optional<bool> override_env;        // overwrite user-exported MASTER_ADDR/PORT
    std::optional<std::uint32_t> timeout_s;  // rendezvous timeout for libbootstrap
    std::optional<PortRange> port_range;     // site only: where derived ports fall
    std::optional<bool> launcher;            // one task per node runs torchrun/accelerate/...
    std::optional<std::uint32_t> nproc;      // nproc=N: workers per node under launcher
    std::optional<bool> torchelastic;        // TORCHELASTIC_* markers (torchrun-launched)
    std::optional<RankOrder> rank_order;     // rank-order=block|node
    std::optional<std::uint32_t> ports;      // ports=K: size of the step's port block
    std::optional<bool> debug;               // debug[=DIR]: NCCL/torch diagnostics
    std::optional<std::string> debug_dir;    // debug=DIR (relative: to SLURM_SUBMIT_DIR)
    std::optional<bool> jax;                 // JAX_COORDINATOR_ADDRESS, JAX_* ids
    std::optional<bool> tf;                  // TF_CONFIG
    std::optional<bool> hostfile;            // a `host slots=N` file, SLURM_DDP_HOSTFILE
    std::optional<bool> keep_going;          // keep-going: no fail-fast when a task fails
    std::optional<FailFastScope> fail_fast;  // site only: fail-fast=asked|all
    std::optional<bool> requeue;             // requeue: Slurm's early signal requeues the job
};

// The options in force for a step: merge_options' result, the user's choices over the site's
// over each option's declared default (its table row's default_value, or option_params.hpp), so
// that no consumer restates a default. Where an option's default is not a value but comes from
// the step where it is used (a derived port, rank 0's host, the node's GPUs, a block as large as
// the step needs, no SLURM_DDP_TIMEOUT), the field stays optional: "not given" is that default.
// A default-constructed StepOptions is a bare --ddp's: every option at its default.
struct StepOptions {
    StepOptions();  // sets every field from its declaration

    bool enabled{};
    std::optional<std::uint16_t> port;  // not given: derived (core/task/port_block.hpp)
    std::optional<std::string> addr;    // not given: rank 0's host
    std::string addr_suffix;            // empty: none
    GpuBindPolicy gpu_bind{};           // not given: single under tf, else kDefaultGpuBind
    bool gpu_share{};
    bool nccl_hints{};
    bool verbose{};
    bool check{};
    bool override_env{};
    std::optional<std::uint32_t> timeout_s;  // not given: SLURM_DDP_TIMEOUT left unset
    PortRange port_range{};
    bool launcher{};
    std::optional<std::uint32_t> nproc;  // not given: the node's GPUs, or 1
    bool torchelastic{};
    RankOrder rank_order{};
    std::optional<std::uint32_t> ports;  // not given: kPortsParam.value, or what the step needs
    bool debug{};
    std::string debug_dir;  // kDefaultDebugDir unless debug=DIR (relative: to SLURM_SUBMIT_DIR)
    bool jax{};
    bool tf{};
    bool hostfile{};
    bool keep_going{};
    FailFastScope fail_fast{};
    bool requeue{};

    // The merged options as given (site, then user): for describe_options, and for a message
    // that quotes what the user wrote. No consumer reads a setting from here.
    DdpOptions given;
};

// ---- The option table. -------------------------------------------------------------------

enum class OptionScope { user, site, both };

enum class OptionType {
    set_value,     // no value allowed; sets a flag field to `set_to` (on, off)
    flag,          // KEY or KEY=yes|no (value_required: KEY=yes|no only)
    number,        // KEY=N with N in [min, max]
    port,          // KEY=N with N in [1024, 65535]
    port_range,    // KEY=LO-HI
    host,          // KEY=host name, address or suffix
    choice,        // KEY=one of `choices` (stored as the enumerator with that index)
    flag_or_path,  // KEY, KEY=yes|no or KEY=DIR
};

using OptionField =
    std::variant<std::optional<bool> DdpOptions::*, std::optional<std::uint16_t> DdpOptions::*,
                 std::optional<std::uint32_t> DdpOptions::*,
                 std::optional<std::string> DdpOptions::*, std::optional<PortRange> DdpOptions::*,
                 std::optional<GpuBindPolicy> DdpOptions::*, std::optional<RankOrder> DdpOptions::*,
                 std::optional<FailFastScope> DdpOptions::*>;

// A row's default as a value of its field's type; monostate where the default is not a value
// (derived from the step, or the absence of a setting), which default_text then describes.
using OptionValue = std::variant<std::monostate, bool, std::uint32_t, PortRange, GpuBindPolicy,
                                 RankOrder, FailFastScope>;

struct OptionSpec {
    std::string_view name{};
    OptionScope scope = OptionScope::both;
    OptionType type = OptionType::flag;
    OptionField field{};
    std::string_view syntax{};        // value syntax for help ("N", "LO-HI"); empty for a flag
    OptionValue default_value{};      // what applies when the option is not given
    std::string_view default_text{};  // ... in words, only where it is not a value
    std::string_view help{};          // one line
    std::span<const std::string_view> variables{};  // the variables it sets or changes
    std::string_view example{};  // a valid item, for messages ("e.g. port=29500") and tests
    std::uint32_t min = 0;       // number: range
    std::uint32_t max = 0;
    std::string_view unit{};                      // number: "seconds", "a number"
    std::string_view range_note{};                // number: " (what the number counts)"
    std::span<const std::string_view> choices{};  // choice: valid values, the enum's order
    std::string_view choice_words{};              // choice: "policies", "orders" (messages)
    bool set_to = false;                          // set_value: the value stored
    bool value_required = false;                  // flag: KEY alone is not enough
    std::string_view alias_of{};                  // another row's name: same option
    std::string_view replaces{};  // a site row a user value of this one drops (merge)
};

// A pair the parser refuses within one option string. `first`/`second` are "key" (given and
// not turned off), "key=value", "!key" (not given, or turned off) or "*" (any other key).
struct OptionConflict {
    std::string_view first{};
    std::string_view second{};
    std::string_view message{};
};

std::span<const OptionSpec> option_table();
std::span<const OptionConflict> option_conflicts();
const OptionSpec* find_option(std::string_view name);
// The row's default as help, docs and messages write it: its value in the row's own syntax
// (a flag `no`, or `off` where the row's syntax is on|off), else default_text.
std::string option_default_text(const OptionSpec& spec);
// The default is a value the parser accepts as `name=<option_default_text>`.
bool has_value_default(const OptionSpec& spec);
// The variables the option table says option `name` sets (none for an unknown name).
std::vector<std::string> option_variable_names(std::string_view name);

// The value of `--ddp`: nullptr/empty/"(null)" (a bare `#SBATCH --ddp`) mean "on, defaults".
Result<DdpOptions> parse_user_options(std::string_view optarg);
// Plugin arguments from plugstack.conf (argv of slurm_spank_init).
Result<DdpOptions> parse_site_arguments(const std::vector<std::string>& args);
// Site defaults first, then the user's choices on top, then each option's declared default.
StepOptions merge_options(const DdpOptions& site, const DdpOptions& user);
// Canonical text of the options, for logs and the verbose table.
std::string describe_options(const DdpOptions& opts);
// ... of a step's options: those given, and any a verdict of the step changed since (override).
std::string describe_options(const StepOptions& opts);
// How long --ddp=check waits: timeout= capped at kCheckTimeoutMaxSeconds, else
// kCheckTimeoutSeconds.
std::uint32_t check_timeout_seconds(const StepOptions& opts);

}  // namespace sddp

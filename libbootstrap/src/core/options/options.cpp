// SPDX-License-Identifier: Apache-2.0
#include "core/options/options.hpp"

#include <algorithm>
#include <array>
#include <cstdint>

#include "core/base/numbers.hpp"
#include "core/contract/contract.hpp"

namespace sddp {
namespace {

using T = OptionType;
using S = OptionScope;
using O = DdpOptions;

constexpr std::array<std::string_view, 4> kGpuBindNames{"local", "single", "closest", "none"};
constexpr std::array<std::string_view, 2> kRankOrderNames{"block", "node"};
constexpr std::array<std::string_view, 2> kFailFastNames{"asked", "all"};

// The variables each option sets (names of the contract come from core/contract/contract.hpp).
constexpr std::array<std::string_view, 2> kPortVars{"MASTER_PORT", contract::kPortsVar};
constexpr std::array<std::string_view, 1> kRangeVars{"MASTER_PORT"};
constexpr std::array<std::string_view, 1> kBlockVars{contract::kPortsVar};
constexpr std::array<std::string_view, 1> kAddrVars{"MASTER_ADDR"};
constexpr std::array<std::string_view, 2> kGpuVars{"CUDA_VISIBLE_DEVICES", contract::kDeviceVar};
constexpr std::array<std::string_view, 3> kHintVars{"NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME",
                                                    "UCX_NET_DEVICES"};
constexpr std::array<std::string_view, 2> kOverrideVars{"MASTER_ADDR", "MASTER_PORT"};
constexpr std::array<std::string_view, 1> kTimeoutVars{contract::kTimeoutVar};
constexpr std::array<std::string_view, 2> kLauncherVars{"PET_*", contract::kNumProcessesVar};
constexpr std::array<std::string_view, 1> kNprocVars{"PET_NPROC_PER_NODE"};
constexpr std::array<std::string_view, 3> kElasticVars{
    "TORCHELASTIC_RUN_ID", "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS"};
constexpr std::array<std::string_view, 1> kRankVars{"RANK"};
constexpr std::array<std::string_view, 7> kDebugVars{"NCCL_DEBUG",
                                                     "NCCL_DEBUG_FILE",
                                                     "TORCH_DISTRIBUTED_DEBUG",
                                                     "TORCH_NCCL_TRACE_BUFFER_SIZE",
                                                     "TORCH_NCCL_DUMP_ON_TIMEOUT",
                                                     "TORCH_NCCL_DEBUG_INFO_TEMP_FILE",
                                                     contract::kDebugDirVar};
constexpr std::array<std::string_view, 4> kJaxVars{"JAX_COORDINATOR_ADDRESS", "JAX_NUM_PROCESSES",
                                                   "JAX_PROCESS_ID", "JAX_LOCAL_DEVICE_IDS"};
constexpr std::array<std::string_view, 1> kTfVars{"TF_CONFIG"};
constexpr std::array<std::string_view, 1> kHostfileVars{contract::kHostfileVar};
// Every --ddp task gets the restart count; requeue is what makes it grow.
constexpr std::array<std::string_view, 1> kRequeueVars{contract::kRestartsVar};

// The one declaration of every option. Order is the order of help, docs and describe_options.
constexpr std::array kOptions{
    OptionSpec{.name = "on",
               .scope = S::user,
               .type = T::set_value,
               .field = &O::enabled,
               .default_text = "on with --ddp",
               .help = "enable for this step (the default when --ddp is given)",
               .example = "on",
               .set_to = true},
    OptionSpec{.name = "off",
               .scope = S::user,
               .type = T::set_value,
               .field = &O::enabled,
               .default_text = "-",
               .help = "disable for this step (where the site turns --ddp on); give it alone",
               .example = "off",
               .set_to = false},
    OptionSpec{.name = "default",
               .scope = S::site,
               .type = T::flag,
               .field = &O::enabled,
               .syntax = "on|off",
               .default_value = false,
               .help = "whether steps get --ddp without asking for it",
               .example = "default=on",
               .value_required = true},
    OptionSpec{.name = "port",
               .type = T::port,
               .field = &O::port,
               .syntax = "N",
               .default_text = "derived",
               .help = "fixed MASTER_PORT, the first port of the step's block (1024-65535)",
               .variables = kPortVars,
               .example = "port=29500"},
    OptionSpec{.name = "port-range",
               .scope = S::site,
               .type = T::port_range,
               .field = &O::port_range,
               .syntax = "LO-HI",
               .default_value = kDefaultPortRange,
               .help = "where derived port blocks fall",
               .variables = kRangeVars,
               .example = "port-range=20000-29999"},
    OptionSpec{.name = kPortsParam.option,
               .type = T::number,
               .field = &O::ports,
               .syntax = "K",
               .default_value = kPortsParam.value,
               .help = "MASTER_PORT..+K-1 reserved for the step (tf: at least tasks per node + 1)",
               .variables = kBlockVars,
               .example = "ports=4",
               .min = kPortsParam.min,
               .max = kPortsParam.max,
               .unit = "a number",
               .range_note = " (ports reserved for the step from MASTER_PORT on)"},
    OptionSpec{.name = "addr",
               .scope = S::user,
               .type = T::host,
               .field = &O::addr,
               .syntax = "HOST",
               .default_text = "rank 0's host",
               .help = "fixed MASTER_ADDR",
               .variables = kAddrVars,
               .example = "addr=n001-ib",
               .replaces = "addr-suffix"},
    OptionSpec{.name = "addr-suffix",
               .type = T::host,
               .field = &O::addr_suffix,
               .syntax = "S",
               .default_text = "none",
               .help = "MASTER_ADDR is rank 0's host name + S (fabric names)",
               .variables = kAddrVars,
               .example = "addr-suffix=-ib"},
    OptionSpec{.name = "gpu-bind",
               .type = T::choice,
               .field = &O::gpu_bind,
               .syntax = "local|single|closest|none",
               .default_value = kDefaultGpuBind,
               .help = "GPU binding policy (tf: single unless given)",
               .variables = kGpuVars,
               .example = "gpu-bind=local",
               .choices = kGpuBindNames,
               .choice_words = "policies"},
    OptionSpec{.name = "gpu-share",
               .field = &O::gpu_share,
               .default_value = false,
               .help = "allow more tasks than GPUs on a node (round robin)",
               .variables = kGpuVars,
               .example = "gpu-share"},
    OptionSpec{
        .name = "net-hints",
        .field = &O::nccl_hints,
        .default_value = false,
        .help = "NCCL/GLOO_SOCKET_IFNAME: the node's interface to MASTER_ADDR; UCX: nearest HCA",
        .variables = kHintVars,
        .example = "net-hints"},
    OptionSpec{.name = "nccl-hints",
               .field = &O::nccl_hints,
               .default_value = false,
               .help = "the same as net-hints (older name)",
               .variables = kHintVars,
               .example = "nccl-hints",
               .alias_of = "net-hints"},
    OptionSpec{.name = "verbose",
               .field = &O::verbose,
               .default_value = false,
               .help = "rank 0 prints the rank/host/GPU table before the program",
               .example = "verbose"},
    OptionSpec{.name = "check",
               .field = &O::check,
               .default_value = false,
               .help = "run slurm-ddp check before the program; fail the task if not",
               .example = "check"},
    OptionSpec{.name = "override",
               .field = &O::override_env,
               .default_value = false,
               .help = "replace MASTER_ADDR/MASTER_PORT the user exported",
               .variables = kOverrideVars,
               .example = "override"},
    OptionSpec{.name = kTimeoutParam.option,
               .type = T::number,
               .field = &O::timeout_s,
               .syntax = "SECONDS",
               .default_value = kTimeoutParam.value,
               .help = "libbootstrap rendezvous timeout",
               .variables = kTimeoutVars,
               .example = "timeout=600",
               .min = kTimeoutParam.min,
               .max = kTimeoutParam.max,
               .unit = "seconds"},
    OptionSpec{.name = "launcher",
               .field = &O::launcher,
               .default_value = false,
               .help = "one task per node runs torchrun/accelerate/deepspeed",
               .variables = kLauncherVars,
               .example = "launcher"},
    OptionSpec{.name = "nproc",
               .type = T::number,
               .field = &O::nproc,
               .syntax = "N",
               .default_text = "node's GPUs or 1",
               .help = "workers per node under launcher",
               .variables = kNprocVars,
               .example = "nproc=8",
               .min = 1,
               .max = kMaxNproc,
               .unit = "a number",
               .range_note = " (workers the launcher starts on each node)"},
    OptionSpec{.name = "torchelastic",
               .field = &O::torchelastic,
               .default_value = false,
               .help = "torchrun's markers: frameworks trust the variables",
               .variables = kElasticVars,
               .example = "torchelastic"},
    OptionSpec{.name = "rank-order",
               .type = T::choice,
               .field = &O::rank_order,
               .syntax = "block|node",
               .default_value = kDefaultRankOrder,
               .help = "node: RANK contiguous per node, in node order",
               .variables = kRankVars,
               .example = "rank-order=node",
               .choices = kRankOrderNames,
               .choice_words = "orders"},
    OptionSpec{.name = "debug",
               .type = T::flag_or_path,
               .field = &O::debug,
               .syntax = "DIR",
               .default_value = false,
               .help = "NCCL/torch diagnostics into DIR/<job>.<step> (default slurm-ddp-debug)",
               .variables = kDebugVars,
               .example = "debug=/scratch/ddp-debug"},
    OptionSpec{.name = "jax",
               .field = &O::jax,
               .default_value = false,
               .help = "jax.distributed.initialize() with no arguments: coordinator at MASTER_PORT",
               .variables = kJaxVars,
               .example = "jax"},
    OptionSpec{.name = "tf",
               .field = &O::tf,
               .default_value = false,
               .help = "TensorFlow MultiWorkerMirroredStrategy: one worker per rank",
               .variables = kTfVars,
               .example = "tf"},
    OptionSpec{.name = "hostfile",
               .field = &O::hostfile,
               .default_value = false,
               .help = "a `host slots=N` file of the step (DeepSpeed/MPI/Horovod), rank 0's first",
               .variables = kHostfileVars,
               .example = "hostfile"},
    OptionSpec{
        .name = "keep-going",
        .field = &O::keep_going,
        .default_value = false,
        .help = "a failed task does not end the step (default: the first one ends the others)",
        .example = "keep-going"},
    OptionSpec{.name = "fail-fast",
               .scope = S::site,
               .type = T::choice,
               .field = &O::fail_fast,
               .syntax = "asked|all",
               .default_value = kDefaultFailFast,
               .help = "which steps a failed task ends: those that asked for --ddp, or also those "
                       "default=on gave it",
               .example = "fail-fast=all",
               .choices = kFailFastNames,
               .choice_words = "scopes"},
    OptionSpec{
        .name = "requeue",
        .field = &O::requeue,
        .default_value = false,
        .help = "SIGUSR1/2 from Slurm (--signal, preemption) requeues the job after its script",
        .variables = kRequeueVars,
        .example = "requeue"},
};

// Checked in this order; the first that holds is the error.
constexpr std::array kConflicts{
    OptionConflict{"on", "off", "gives both 'on' and 'off'; choose one"},
    OptionConflict{"off", "*",
                   "combines 'off' with other keys; 'off' disables --ddp for the step, so give it "
                   "alone (--ddp=off)"},
    OptionConflict{"addr", "addr-suffix",
                   "gives both 'addr' and 'addr-suffix'; 'addr' names the host outright, so "
                   "choose one"},
    OptionConflict{"port", "port-range",
                   "gives both 'port' and 'port-range'; a fixed port makes the range unused"},
    OptionConflict{"nproc", "!launcher",
                   "gives nproc= without launcher; nproc is the launcher's workers per node, so "
                   "add launcher (--ddp=launcher,nproc=N) or drop nproc"},
    OptionConflict{"launcher", "rank-order=node",
                   "combines launcher with rank-order=node; under launcher --ddp sets no RANK (the "
                   "launcher numbers its workers, contiguously per node), so drop rank-order"},
    OptionConflict{"gpu-share", "gpu-bind=none",
                   "combines gpu-share with gpu-bind=none; sharing is a binding choice, so drop "
                   "one of them"},
    OptionConflict{"jax", "launcher",
                   "combines jax with launcher; JAX has no per-node launcher (each task is one "
                   "JAX process), so drop launcher and run one task per process"},
    OptionConflict{"tf", "launcher",
                   "combines tf with launcher; TF_CONFIG names one worker per task and TensorFlow "
                   "has no per-node launcher, so drop launcher and run one task per worker"},
};

constexpr std::size_t kMaxOptionText = 4096;  // longer than any sane option string

bool allowed_in(const OptionSpec& spec, OptionScope where) {
    return spec.scope == S::both || spec.scope == where;
}

std::string valid_keys(OptionScope where) {
    std::string out;
    for (const auto& k : kOptions) {
        if (!allowed_in(k, where)) continue;
        out += "\n  ";
        out += k.name;
        out += std::string(13 - std::min<std::size_t>(12, k.name.size()), ' ');
        if (!k.syntax.empty()) {
            out += k.name;
            out += "=";
            out += k.syntax;
            out += ": ";
        }
        out += k.help;
    }
    if (where == S::user)
        out += "\n  help         print this table and exit (srun, sbatch, salloc)";
    return out;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

std::string join_choices(std::span<const std::string_view> choices) {
    std::string out;
    for (std::size_t i = 0; i < choices.size(); ++i) {
        if (i > 0) out += i + 1 == choices.size() ? " or " : ", ";
        out += choices[i];
    }
    return out;
}

// A value as option text ("yes"/"no" for flags).
template <typename V>
std::string text_of(const V& v) {
    if constexpr (std::is_same_v<V, bool>) {
        return v ? "yes" : "no";
    } else if constexpr (std::is_same_v<V, std::string>) {
        return v;
    } else if constexpr (std::is_same_v<V, PortRange>) {
        return std::to_string(v.first) + "-" + std::to_string(v.last);
    } else if constexpr (std::is_enum_v<V>) {
        return std::string(to_string(v));
    } else {
        return std::to_string(v);
    }
}

// The value of `spec`'s field as option text, nullopt when unset.
std::optional<std::string> value_text(const OptionSpec& spec, const DdpOptions& o) {
    return std::visit(
        [&](auto member) -> std::optional<std::string> {
            const auto& v = o.*member;
            if (!v) return std::nullopt;
            return text_of(*v);
        },
        spec.field);
}

class OptionParser {
  public:
    OptionParser(OptionScope scope, std::string_view source) : scope_(scope), source_(source) {}

    Status parse_list(std::string_view text) {
        if (text.size() > kMaxOptionText) {
            return fail(Errc::too_large, "is " + std::to_string(text.size()) +
                                             " characters long; the limit is " +
                                             std::to_string(kMaxOptionText));
        }
        while (true) {
            const auto comma = text.find(',');
            const auto item = trim(text.substr(0, comma));
            if (item.empty()) {
                if (comma == std::string_view::npos && seen_any_) break;
                return fail(Errc::invalid_input,
                            "has an empty item in " + quote_value(text) +
                                "; separate key[=value] items with single commas, e.g. "
                                "--ddp=port=29500,verbose");
            }
            SDDP_CHECK(parse_item(item));
            seen_any_ = true;
            if (comma == std::string_view::npos) break;
            text.remove_prefix(comma + 1);
            if (text.empty()) {
                return fail(Errc::invalid_input, "ends with a comma");
            }
        }
        return ok_status();
    }

    Result<DdpOptions> finish() {
        SDDP_CHECK(check_conflicts());
        return opts_;
    }

  private:
    using Value = std::optional<std::string_view>;

    Status fail(Errc code, const std::string& what) const {
        return make_error(code, std::string(source_) + " " + what);
    }

    Status parse_item(std::string_view item) {
        const auto eq = item.find('=');
        const auto key = trim(item.substr(0, eq));
        const Value value =
            eq == std::string_view::npos ? std::nullopt : Value(trim(item.substr(eq + 1)));
        const OptionSpec* spec = find_option(key);
        if (spec == nullptr || !allowed_in(*spec, scope_)) {
            const bool elsewhere = spec != nullptr;
            return fail(Errc::invalid_input,
                        "has " +
                            std::string(elsewhere ? "a key not allowed here" : "an unknown key") +
                            ": " + quote_value(key) +
                            (elsewhere && scope_ == S::user
                                 ? " (it is a plugin argument for plugstack.conf)"
                                 : "") +
                            ". Valid keys:" + valid_keys(scope_));
        }
        if (!spec->alias_of.empty()) spec = find_option(spec->alias_of);
        if (std::find(seen_.begin(), seen_.end(), spec->name) != seen_.end()) {
            return fail(Errc::invalid_input,
                        "gives " + quote_value(spec->name) + " twice; give it once");
        }
        seen_.emplace_back(spec->name);
        return apply(*spec, value);
    }

    Status need_value(const OptionSpec& spec, const Value& value) const {
        if (value && !value->empty()) return ok_status();
        return fail(Errc::invalid_input, "needs a value for " + quote_value(spec.name) + ", e.g. " +
                                             std::string(spec.example));
    }

    Result<bool> flag(std::string_view key, const Value& value) const {
        if (!value) return true;
        static constexpr std::array<std::string_view, 4> kTrue{"1", "yes", "true", "on"};
        static constexpr std::array<std::string_view, 4> kFalse{"0", "no", "false", "off"};
        if (std::find(kTrue.begin(), kTrue.end(), *value) != kTrue.end()) return true;
        if (std::find(kFalse.begin(), kFalse.end(), *value) != kFalse.end()) return false;
        return fail(Errc::invalid_input, "has " + quote_value(key) + "=" + quote_value(*value) +
                                             "; use " + std::string(key) + " alone or " +
                                             std::string(key) + "=yes|no")
            .take_error();
    }

    Result<std::uint16_t> port_number(std::string_view key, std::string_view text) const {
        const auto v = parse_decimal(text, 65535);
        if (!v || *v < 1024) {
            return fail(Errc::invalid_input,
                        "has " + std::string(key) + "=" + quote_value(text) +
                            "; a port is a number from 1024 to 65535 (below 1024 needs root)")
                .take_error();
        }
        return static_cast<std::uint16_t>(*v);
    }

    Status host_text(std::string_view key, std::string_view text) const {
        const bool ok = !text.empty() && text.size() <= 253 &&
                        std::all_of(text.begin(), text.end(), [](char c) {
                            return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                                   (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
                                   c == ':';
                        });
        if (ok) return ok_status();
        return fail(Errc::invalid_input, "has " + std::string(key) + "=" + quote_value(text) +
                                             "; expected a host name, address or suffix of "
                                             "letters, digits, '-', '.', '_' or ':' (max 253)");
    }

    template <typename V>
    void store(const OptionSpec& spec, V v) {
        opts_.*std::get<std::optional<V> DdpOptions::*>(spec.field) = std::move(v);
    }

    Status apply(const OptionSpec& spec, const Value& value) {
        const std::string_view key = spec.name;
        switch (spec.type) {
            case T::set_value:
                if (value) return fail(Errc::invalid_input, quote_value(key) + " takes no value");
                store(spec, spec.set_to);
                return ok_status();
            case T::flag: {
                if (spec.value_required) SDDP_CHECK(need_value(spec, value));
                SDDP_TRY(f, flag(key, value));
                store(spec, f);
                return ok_status();
            }
            case T::port: {
                SDDP_CHECK(need_value(spec, value));
                SDDP_TRY(p, port_number(key, *value));
                store(spec, p);
                return ok_status();
            }
            case T::port_range:
                return apply_port_range(spec, value);
            case T::host:
                SDDP_CHECK(need_value(spec, value));
                SDDP_CHECK(host_text(key, *value));
                store(spec, std::string(*value));
                return ok_status();
            case T::number: {
                SDDP_CHECK(need_value(spec, value));
                const auto v = parse_decimal(*value, spec.max);
                if (!v || *v < spec.min) {
                    return fail(Errc::invalid_input,
                                "has " + std::string(key) + "=" + quote_value(*value) +
                                    "; expected " + std::string(spec.unit) + " from " +
                                    std::to_string(spec.min) + " to " + std::to_string(spec.max) +
                                    std::string(spec.range_note));
                }
                store(spec, static_cast<std::uint32_t>(*v));
                return ok_status();
            }
            case T::choice:
                return apply_choice(spec, value);
            case T::flag_or_path:
                return apply_flag_or_path(spec, value);
        }
        return fail(Errc::internal, "key " + quote_value(key) + " has no handler");
    }

    Status apply_port_range(const OptionSpec& spec, const Value& value) {
        SDDP_CHECK(need_value(spec, value));
        const auto dash = value->find('-');
        if (dash == std::string_view::npos) {
            return fail(Errc::invalid_input, "has " + std::string(spec.name) + "=" +
                                                 quote_value(*value) +
                                                 "; expected LO-HI, e.g. 20000-29999");
        }
        SDDP_TRY(lo, port_number(spec.name, value->substr(0, dash)));
        SDDP_TRY(hi, port_number(spec.name, value->substr(dash + 1)));
        if (lo > hi) {
            return fail(Errc::invalid_input, "has " + std::string(spec.name) + "=" +
                                                 quote_value(*value) +
                                                 " with LO above HI; write LO-HI");
        }
        store(spec, PortRange{lo, hi});
        return ok_status();
    }

    Status apply_choice(const OptionSpec& spec, const Value& value) {
        SDDP_CHECK(need_value(spec, value));
        for (std::size_t i = 0; i < spec.choices.size(); ++i) {
            if (*value != spec.choices[i]) continue;
            std::visit(
                [&](auto member) {
                    using V = std::decay_t<decltype(*(opts_.*member))>;
                    if constexpr (std::is_enum_v<V>) opts_.*member = static_cast<V>(i);
                },
                spec.field);
            return ok_status();
        }
        return fail(Errc::invalid_input,
                    "has " + std::string(spec.name) + "=" + quote_value(*value) + "; valid " +
                        std::string(spec.choice_words) + ": " + join_choices(spec.choices));
    }

    // debug=no lets a user turn off a site's debug default; anything else is a path.
    Status apply_flag_or_path(const OptionSpec& spec, const Value& value) {
        for (std::string_view word : {"0", "no", "false", "off", "1", "yes", "true", "on"}) {
            if (!value || *value == word) {
                SDDP_TRY(f, flag(spec.name, value));
                store(spec, f);
                return ok_status();
            }
        }
        store(spec, true);
        SDDP_CHECK(need_value(spec, value));
        const bool ok =
            value->size() <= 1024 && std::all_of(value->begin(), value->end(), [](char c) {
                return static_cast<unsigned char>(c) > ' ' && c != '\\' &&
                       static_cast<unsigned char>(c) < 0x7f;
            });
        if (!ok) {
            return fail(Errc::invalid_input,
                        "has " + std::string(spec.name) + "=" + quote_value(*value) +
                            "; expected a directory path without spaces, control characters or "
                            "backslashes (max 1024 characters)");
        }
        opts_.debug_dir = std::string(*value);
        return ok_status();
    }

    bool seen(std::string_view key) const {
        return std::find(seen_.begin(), seen_.end(), key) != seen_.end();
    }

    // "key" holds when the key was given and, for a flag, not turned off.
    bool holds(std::string_view cond) const {
        if (cond == "*") return seen_.size() > 1;
        if (!cond.empty() && cond.front() == '!') return !holds(cond.substr(1));
        const auto eq = cond.find('=');
        const auto key = cond.substr(0, eq);
        if (!seen(key)) return false;
        const OptionSpec* spec = find_option(key);
        if (spec == nullptr) return false;
        const auto text = value_text(*spec, opts_);
        if (eq != std::string_view::npos) return text && *text == cond.substr(eq + 1);
        if (spec->type == T::set_value) return true;
        return text && *text != "no";
    }

    Status check_conflicts() const {
        for (const auto& c : kConflicts) {
            if (holds(c.first) && holds(c.second)) {
                return fail(Errc::invalid_input, std::string(c.message));
            }
        }
        return ok_status();
    }

    OptionScope scope_;
    std::string_view source_;
    DdpOptions opts_;
    std::vector<std::string_view> seen_;  // canonical names (rows of kOptions)
    bool seen_any_ = false;
};

}  // namespace

const char* to_string(GpuBindPolicy policy) {
    return kGpuBindNames.at(static_cast<std::size_t>(policy)).data();
}

const char* to_string(RankOrder order) {
    return kRankOrderNames.at(static_cast<std::size_t>(order)).data();
}

const char* to_string(FailFastScope scope) {
    return kFailFastNames.at(static_cast<std::size_t>(scope)).data();
}

std::span<const OptionSpec> option_table() {
    return kOptions;
}

std::span<const OptionConflict> option_conflicts() {
    return kConflicts;
}

const OptionSpec* find_option(std::string_view name) {
    const auto it = std::find_if(kOptions.begin(), kOptions.end(),
                                 [&](const OptionSpec& k) { return k.name == name; });
    return it == kOptions.end() ? nullptr : &*it;
}

std::string option_default_text(const OptionSpec& spec) {
    return std::visit(
        [&](const auto& v) -> std::string {
            using V = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<V, std::monostate>) {
                return std::string(spec.default_text);
            } else if constexpr (std::is_same_v<V, bool>) {
                // A row whose syntax spells the flag (default=on|off) shows its default that way.
                const auto bar = spec.syntax.find('|');
                if (bar == std::string_view::npos) return text_of(v);
                return std::string(v ? spec.syntax.substr(0, bar) : spec.syntax.substr(bar + 1));
            } else {
                return text_of(v);
            }
        },
        spec.default_value);
}

bool has_value_default(const OptionSpec& spec) {
    return !std::holds_alternative<std::monostate>(spec.default_value);
}

std::vector<std::string> option_variable_names(std::string_view name) {
    std::vector<std::string> out;
    if (const OptionSpec* o = find_option(name)) {
        for (const auto v : o->variables) out.emplace_back(v);
    }
    return out;
}

Result<DdpOptions> parse_user_options(std::string_view optarg) {
    const auto text = trim(optarg);
    if (text.empty() || text == "(null)") return DdpOptions{};
    OptionParser p(S::user, "--ddp option");
    SDDP_CHECK(p.parse_list(text));
    return p.finish();
}

Result<DdpOptions> parse_site_arguments(const std::vector<std::string>& args) {
    OptionParser p(S::site, "spank_ddp plugin argument (plugstack.conf)");
    for (const auto& a : args) {
        if (trim(a).empty()) continue;
        SDDP_CHECK(p.parse_list(a));
    }
    return p.finish();
}

namespace {

// Site defaults first, then the user's choices on top: the options as given.
DdpOptions merge_given(const DdpOptions& site, const DdpOptions& user) {
    DdpOptions out = site;
    for (const auto& spec : kOptions) {
        std::visit(
            [&](auto member) {
                if (user.*member) out.*member = user.*member;
            },
            spec.field);
    }
    if (user.debug_dir) out.debug_dir = user.debug_dir;
    // A user value that names the thing outright replaces the site's rule for it.
    for (const auto& spec : kOptions) {
        if (spec.replaces.empty() || !value_text(spec, user)) continue;
        if (const OptionSpec* other = find_option(spec.replaces)) {
            std::visit([&](auto member) { (out.*member).reset(); }, other->field);
        }
    }
    return out;
}

// Each StepOptions field with the DdpOptions field it resolves, listed once: resolve_into and
// describe_options visit them.
template <typename F, typename... Steps>
void for_each_step_field(F&& f, Steps&... s) {
    f(&O::enabled, s.enabled...);
    f(&O::port, s.port...);
    f(&O::addr, s.addr...);
    f(&O::addr_suffix, s.addr_suffix...);
    f(&O::gpu_bind, s.gpu_bind...);
    f(&O::gpu_share, s.gpu_share...);
    f(&O::nccl_hints, s.nccl_hints...);
    f(&O::verbose, s.verbose...);
    f(&O::check, s.check...);
    f(&O::override_env, s.override_env...);
    f(&O::timeout_s, s.timeout_s...);
    f(&O::port_range, s.port_range...);
    f(&O::launcher, s.launcher...);
    f(&O::nproc, s.nproc...);
    f(&O::torchelastic, s.torchelastic...);
    f(&O::rank_order, s.rank_order...);
    f(&O::ports, s.ports...);
    f(&O::debug, s.debug...);
    f(&O::debug_dir, s.debug_dir...);
    f(&O::jax, s.jax...);
    f(&O::tf, s.tf...);
    f(&O::hostfile, s.hostfile...);
    f(&O::keep_going, s.keep_going...);
    f(&O::fail_fast, s.fail_fast...);
    f(&O::requeue, s.requeue...);
}

// The default the option table declares for `field`: the value of the first row that fills it
// and declares one (an alias's row or a set_value row declares none of its own).
template <typename V>
V declared_default(std::optional<V> DdpOptions::*field) {
    for (const auto& spec : kOptions) {
        if (spec.field == OptionField(field) && std::holds_alternative<V>(spec.default_value))
            return std::get<V>(spec.default_value);
    }
    return V{};  // unreachable: the option tests resolve every field of a bare --ddp
}

// An option whose default comes from the step where it is used stays unset when not given.
template <typename V>
void resolve_field(std::optional<V>& out, std::optional<V> DdpOptions::*field,
                   const DdpOptions& given) {
    out = given.*field;
}

template <typename V>
void resolve_field(V& out, std::optional<V> DdpOptions::*field, const DdpOptions& given) {
    out = given.*field ? *(given.*field) : declared_default(field);
}

// The two text options, which the table's value defaults do not hold: the debug directory, and
// an address suffix that is none unless given.
void resolve_field(std::string& out, std::optional<std::string> DdpOptions::*field,
                   const DdpOptions& given) {
    out = given.*field ? *(given.*field)
                       : std::string(field == &O::debug_dir ? kDefaultDebugDir : "");
}

void resolve_into(StepOptions& out, const DdpOptions& given) {
    for_each_step_field([&](auto field, auto& value) { resolve_field(value, field, given); }, out);
    // gpu-bind's default under tf: each TensorFlow worker must see only its own GPU, or every
    // worker takes GPU:0.
    if (!given.gpu_bind && out.tf) out.gpu_bind = GpuBindPolicy::single;
    out.given = given;
}

}  // namespace

StepOptions::StepOptions() {
    resolve_into(*this, DdpOptions{});
}

StepOptions merge_options(const DdpOptions& site, const DdpOptions& user) {
    StepOptions out;
    resolve_into(out, merge_given(site, user));
    return out;
}

std::string describe_options(const StepOptions& o) {
    DdpOptions shown = o.given;
    StepOptions as_given;
    resolve_into(as_given, o.given);
    for_each_step_field(
        [&](auto field, const auto& now, const auto& then) {
            if (!(now == then)) shown.*field = now;
        },
        o, as_given);
    return describe_options(shown);
}

std::uint32_t check_timeout_seconds(const StepOptions& o) {
    return std::min(o.timeout_s.value_or(kCheckTimeoutSeconds), kCheckTimeoutMaxSeconds);
}

std::string describe_options(const DdpOptions& o) {
    std::string out;
    auto add = [&](std::string_view item) {
        if (!out.empty()) out += ',';
        out += item;
    };
    for (const auto& spec : kOptions) {
        if (!spec.alias_of.empty()) continue;
        const auto text = value_text(spec, o);
        if (!text) continue;
        switch (spec.type) {
            case T::set_value:
                if (*text == (spec.set_to ? "yes" : "no")) add(spec.name);
                break;
            case T::flag:
                // `default` is the site's way to spell on/off: those rows describe it.
                if (!spec.value_required && *text == "yes") add(spec.name);
                break;
            case T::flag_or_path:
                if (*text == "yes")
                    add(o.debug_dir ? std::string(spec.name) + "=" + *o.debug_dir
                                    : std::string(spec.name));
                break;
            default:
                add(std::string(spec.name) + "=" + *text);
        }
    }
    return out;
}

}  // namespace sddp

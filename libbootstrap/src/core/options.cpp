// SPDX-License-Identifier: Apache-2.0
#include "core/options.hpp"

#include <algorithm>
#include <array>

#include "core/numbers.hpp"

namespace sddp {
namespace {

enum class Scope { user, site, both };

struct KeySpec {
    std::string_view key;
    Scope scope;
    std::string_view help;
};

// One table: what each key means and where it may appear. Error messages list it.
constexpr std::array kKeys{
    KeySpec{"on", Scope::user, "enable for this step (the default when --ddp is given)"},
    KeySpec{"off", Scope::user, "disable for this step (where the site turns --ddp on)"},
    KeySpec{"default", Scope::site, "default=on|off: whether steps get DDP without --ddp"},
    KeySpec{"port", Scope::both, "port=N: fixed MASTER_PORT (1024-65535)"},
    KeySpec{"port-range", Scope::site, "port-range=LO-HI: range for derived ports"},
    KeySpec{"addr", Scope::user, "addr=HOST: fixed MASTER_ADDR"},
    KeySpec{"addr-suffix", Scope::both, "addr-suffix=S: MASTER_ADDR is rank 0's host + S"},
    KeySpec{"gpu-bind", Scope::both, "gpu-bind=local|single|closest|none"},
    KeySpec{"gpu-share", Scope::both, "allow more tasks than GPUs on a node"},
    KeySpec{"net-hints", Scope::both,
            "NCCL_SOCKET_IFNAME/NCCL_IB_HCA from topology, GLOO_SOCKET_IFNAME to MASTER_ADDR"},
    KeySpec{"nccl-hints", Scope::both, "the same as net-hints (older name)"},
    KeySpec{"verbose", Scope::both, "rank 0 prints the rank/host/GPU table"},
    KeySpec{"check", Scope::both, "run slurm-ddp check before the program; fail the task if not"},
    KeySpec{"override", Scope::both, "replace MASTER_ADDR/MASTER_PORT the user exported"},
    KeySpec{"timeout", Scope::both, "timeout=SECONDS: libbootstrap rendezvous timeout"},
    KeySpec{"launcher", Scope::both, "one task per node runs torchrun/accelerate/deepspeed: PET_*"},
    KeySpec{"nproc", Scope::both, "nproc=N: workers per node under launcher (default: GPUs or 1)"},
    KeySpec{"torchelastic", Scope::both, "TORCHELASTIC_RUN_ID...: frameworks trust the variables"},
    KeySpec{"rank-order", Scope::both,
            "rank-order=block|node: node makes ranks contiguous per node"},
    KeySpec{"ports", Scope::both, "ports=K: MASTER_PORT..+K-1 reserved for the step (default 4)"},
    KeySpec{"debug", Scope::both, "debug[=DIR]: NCCL/torch diagnostics into DIR/<job>.<step>"},
};

constexpr std::size_t kMaxOptionText = 4096;  // longer than any sane option string

std::string valid_keys(Scope where) {
    std::string out;
    for (const auto& k : kKeys) {
        if (k.scope != Scope::both && k.scope != where) continue;
        out += "\n  ";
        out += k.key;
        out += std::string(13 - std::min<std::size_t>(12, k.key.size()), ' ');
        out += k.help;
    }
    return out;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

class OptionParser {
  public:
    OptionParser(Scope scope, std::string_view source) : scope_(scope), source_(source) {}

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
    Status fail(Errc code, const std::string& what) const {
        return make_error(code, std::string(source_) + " " + what);
    }

    Status parse_item(std::string_view item) {
        const auto eq = item.find('=');
        auto key = trim(item.substr(0, eq));
        const std::optional<std::string_view> value =
            eq == std::string_view::npos
                ? std::nullopt
                : std::optional<std::string_view>(trim(item.substr(eq + 1)));
        const auto spec = std::find_if(kKeys.begin(), kKeys.end(),
                                       [&](const KeySpec& k) { return k.key == key; });
        if (spec == kKeys.end() || (spec->scope != Scope::both && spec->scope != scope_)) {
            const bool elsewhere = spec != kKeys.end();
            return fail(Errc::invalid_input,
                        "has " +
                            std::string(elsewhere ? "a key not allowed here" : "an unknown key") +
                            ": " + quote_value(key) +
                            (elsewhere && scope_ == Scope::user
                                 ? " (it is a plugin argument for plugstack.conf)"
                                 : "") +
                            ". Valid keys:" + valid_keys(scope_));
        }
        if (key == "nccl-hints") key = "net-hints";  // one option under two names
        if (std::find(seen_.begin(), seen_.end(), key) != seen_.end()) {
            return fail(Errc::invalid_input, "gives " + quote_value(key) + " twice; give it once");
        }
        seen_.emplace_back(key);
        return apply(key, value);
    }

    Status need_value(std::string_view key, const std::optional<std::string_view>& value,
                      std::string_view example) const {
        if (value && !value->empty()) return ok_status();
        return fail(Errc::invalid_input,
                    "needs a value for " + quote_value(key) + ", e.g. " + std::string(example));
    }

    Result<bool> flag(std::string_view key, const std::optional<std::string_view>& value) const {
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

    Status set_flag(std::optional<bool>& field, std::string_view key,
                    const std::optional<std::string_view>& value) {
        auto f = flag(key, value);
        if (!f) return f.take_error();
        field = *f;
        return ok_status();
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

    Status apply(std::string_view key, const std::optional<std::string_view>& value) {
        if (key == "on" || key == "off") {
            if (value) return fail(Errc::invalid_input, quote_value(key) + " takes no value");
            opts_.enabled = key == "on";
            return ok_status();
        }
        if (key == "default") {
            SDDP_CHECK(need_value(key, value, "default=on"));
            auto f = flag(key, value);
            if (!f) return f.take_error();
            opts_.enabled = *f;
            return ok_status();
        }
        if (key == "port") {
            SDDP_CHECK(need_value(key, value, "port=29500"));
            auto p = port_number(key, *value);
            if (!p) return p.take_error();
            opts_.port = *p;
            return ok_status();
        }
        if (key == "port-range") {
            SDDP_CHECK(need_value(key, value, "port-range=20000-29999"));
            const auto dash = value->find('-');
            if (dash == std::string_view::npos) {
                return fail(Errc::invalid_input, "has port-range=" + quote_value(*value) +
                                                     "; expected LO-HI, e.g. 20000-29999");
            }
            auto lo = port_number(key, value->substr(0, dash));
            if (!lo) return lo.take_error();
            auto hi = port_number(key, value->substr(dash + 1));
            if (!hi) return hi.take_error();
            if (*lo > *hi) {
                return fail(Errc::invalid_input, "has port-range=" + quote_value(*value) +
                                                     " with LO above HI; write LO-HI");
            }
            opts_.port_range = PortRange{*lo, *hi};
            return ok_status();
        }
        if (key == "addr" || key == "addr-suffix") {
            SDDP_CHECK(need_value(key, value, key == "addr" ? "addr=n001-ib" : "addr-suffix=-ib"));
            SDDP_CHECK(host_text(key, *value));
            (key == "addr" ? opts_.addr : opts_.addr_suffix) = std::string(*value);
            return ok_status();
        }
        if (key == "gpu-bind") {
            SDDP_CHECK(need_value(key, value, "gpu-bind=local"));
            for (const char* p : kGpuBindPolicies) {
                if (*value == p) {
                    opts_.gpu_bind = std::string(*value);
                    return ok_status();
                }
            }
            return fail(Errc::invalid_input, "has gpu-bind=" + quote_value(*value) +
                                                 "; valid policies: local, single, closest, none");
        }
        if (key == "timeout") {
            SDDP_CHECK(need_value(key, value, "timeout=600"));
            const auto v = parse_decimal(*value, 86400);
            if (!v || *v == 0) {
                return fail(Errc::invalid_input, "has timeout=" + quote_value(*value) +
                                                     "; expected seconds from 1 to 86400");
            }
            opts_.timeout_s = static_cast<std::uint32_t>(*v);
            return ok_status();
        }
        if (key == "nproc" || key == "ports") {
            const bool is_nproc = key == "nproc";
            SDDP_CHECK(need_value(key, value, is_nproc ? "nproc=8" : "ports=4"));
            const std::uint32_t max = is_nproc ? kMaxNproc : kMaxPortBlock;
            const auto v = parse_decimal(*value, max);
            if (!v || *v == 0) {
                return fail(Errc::invalid_input,
                            "has " + std::string(key) + "=" + quote_value(*value) +
                                "; expected a number from 1 to " + std::to_string(max) +
                                (is_nproc ? " (workers the launcher starts on each node)"
                                          : " (ports reserved for the step from MASTER_PORT on)"));
            }
            (is_nproc ? opts_.nproc : opts_.ports) = static_cast<std::uint32_t>(*v);
            return ok_status();
        }
        if (key == "rank-order") {
            SDDP_CHECK(need_value(key, value, "rank-order=node"));
            for (const char* o : kRankOrders) {
                if (*value == o) {
                    opts_.rank_order = std::string(*value);
                    return ok_status();
                }
            }
            return fail(Errc::invalid_input,
                        "has rank-order=" + quote_value(*value) +
                            "; valid orders: block (RANK=SLURM_PROCID, the default), node (ranks "
                            "contiguous per node, in node order)");
        }
        if (key == "debug") {
            // debug=no lets a user turn off a site's debug default; anything else is a path.
            if (!value) {
                opts_.debug = true;
                return ok_status();
            }
            for (std::string_view word : {"0", "no", "false", "off", "1", "yes", "true", "on"}) {
                if (*value == word) return set_flag(opts_.debug, key, value);
            }
            opts_.debug = true;
            SDDP_CHECK(need_value(key, value, "debug=/scratch/ddp-debug"));
            const bool ok =
                value->size() <= 1024 && std::all_of(value->begin(), value->end(), [](char c) {
                    return static_cast<unsigned char>(c) > ' ' && c != '\\' &&
                           static_cast<unsigned char>(c) < 0x7f;
                });
            if (!ok) {
                return fail(Errc::invalid_input,
                            "has debug=" + quote_value(*value) +
                                "; expected a directory path without spaces, control characters "
                                "or backslashes (max 1024 characters)");
            }
            opts_.debug_dir = std::string(*value);
            return ok_status();
        }
        if (key == "launcher") return set_flag(opts_.launcher, key, value);
        if (key == "torchelastic") return set_flag(opts_.torchelastic, key, value);
        if (key == "gpu-share") return set_flag(opts_.gpu_share, key, value);
        if (key == "net-hints") return set_flag(opts_.nccl_hints, key, value);
        if (key == "verbose") return set_flag(opts_.verbose, key, value);
        if (key == "check") return set_flag(opts_.check, key, value);
        if (key == "override") return set_flag(opts_.override_env, key, value);
        return fail(Errc::internal, "key " + quote_value(key) + " has no handler");
    }

    Status check_conflicts() const {
        auto has = [&](std::string_view k) {
            return std::find(seen_.begin(), seen_.end(), k) != seen_.end();
        };
        if (has("off") && seen_.size() > 1) {
            return fail(Errc::invalid_input,
                        "combines 'off' with other keys; 'off' disables --ddp for the step, so "
                        "give it alone (--ddp=off)");
        }
        if (has("on") && has("off")) {
            return fail(Errc::invalid_input, "gives both 'on' and 'off'; choose one");
        }
        if (has("addr") && has("addr-suffix")) {
            return fail(Errc::invalid_input,
                        "gives both 'addr' and 'addr-suffix'; 'addr' names the host outright, so "
                        "choose one");
        }
        if (has("port") && has("port-range")) {
            return fail(Errc::invalid_input,
                        "gives both 'port' and 'port-range'; a fixed port makes the range unused");
        }
        if (has("nproc") && !opts_.launcher.value_or(false)) {
            return fail(Errc::invalid_input,
                        "gives nproc= without launcher; nproc is the launcher's workers per node, "
                        "so add launcher (--ddp=launcher,nproc=N) or drop nproc");
        }
        if (opts_.launcher.value_or(false) && opts_.rank_order == "node") {
            return fail(Errc::invalid_input,
                        "combines launcher with rank-order=node; under launcher --ddp sets no "
                        "RANK (the launcher numbers its workers, contiguously per node), so drop "
                        "rank-order");
        }
        if (opts_.gpu_share.value_or(false) && opts_.gpu_bind == "none") {
            return fail(Errc::invalid_input,
                        "combines gpu-share with gpu-bind=none; sharing is a binding choice, so "
                        "drop one of them");
        }
        return ok_status();
    }

    Scope scope_;
    std::string_view source_;
    DdpOptions opts_;
    std::vector<std::string> seen_;
    bool seen_any_ = false;
};

}  // namespace

Result<DdpOptions> parse_user_options(std::string_view optarg) {
    const auto text = trim(optarg);
    if (text.empty() || text == "(null)") return DdpOptions{};
    OptionParser p(Scope::user, "--ddp option");
    SDDP_CHECK(p.parse_list(text));
    return p.finish();
}

Result<DdpOptions> parse_site_arguments(const std::vector<std::string>& args) {
    OptionParser p(Scope::site, "spank_ddp plugin argument (plugstack.conf)");
    for (const auto& a : args) {
        if (trim(a).empty()) continue;
        SDDP_CHECK(p.parse_list(a));
    }
    return p.finish();
}

DdpOptions merge_options(const DdpOptions& site, const DdpOptions& user) {
    DdpOptions out = site;
    auto take = [](auto& dst, const auto& src) {
        if (src) dst = src;
    };
    take(out.enabled, user.enabled);
    take(out.port, user.port);
    if (user.addr) {
        out.addr = user.addr;
        out.addr_suffix.reset();  // a literal host replaces the site's suffix rule
    }
    take(out.addr_suffix, user.addr_suffix);
    take(out.gpu_bind, user.gpu_bind);
    take(out.gpu_share, user.gpu_share);
    take(out.nccl_hints, user.nccl_hints);
    take(out.verbose, user.verbose);
    take(out.check, user.check);
    take(out.override_env, user.override_env);
    take(out.timeout_s, user.timeout_s);
    take(out.port_range, user.port_range);
    take(out.launcher, user.launcher);
    take(out.nproc, user.nproc);
    take(out.torchelastic, user.torchelastic);
    take(out.rank_order, user.rank_order);
    take(out.ports, user.ports);
    take(out.debug, user.debug);
    take(out.debug_dir, user.debug_dir);
    return out;
}

std::string describe_options(const DdpOptions& o) {
    std::string out;
    auto add = [&](const std::string& item) {
        if (!out.empty()) out += ',';
        out += item;
    };
    if (o.enabled) add(*o.enabled ? "on" : "off");
    if (o.port) add("port=" + std::to_string(*o.port));
    if (o.port_range)
        add("port-range=" + std::to_string(o.port_range->first) + "-" +
            std::to_string(o.port_range->last));
    if (o.addr) add("addr=" + *o.addr);
    if (o.addr_suffix) add("addr-suffix=" + *o.addr_suffix);
    if (o.gpu_bind) add("gpu-bind=" + *o.gpu_bind);
    if (o.gpu_share.value_or(false)) add("gpu-share");
    if (o.nccl_hints.value_or(false)) add("net-hints");
    if (o.verbose.value_or(false)) add("verbose");
    if (o.check.value_or(false)) add("check");
    if (o.override_env.value_or(false)) add("override");
    if (o.timeout_s) add("timeout=" + std::to_string(*o.timeout_s));
    if (o.launcher.value_or(false)) add("launcher");
    if (o.nproc) add("nproc=" + std::to_string(*o.nproc));
    if (o.torchelastic.value_or(false)) add("torchelastic");
    if (o.rank_order) add("rank-order=" + *o.rank_order);
    if (o.ports) add("ports=" + std::to_string(*o.ports));
    if (o.debug.value_or(false)) add(o.debug_dir ? "debug=" + *o.debug_dir : "debug");
    return out;
}

}  // namespace sddp

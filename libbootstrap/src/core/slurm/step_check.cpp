// SPDX-License-Identifier: Apache-2.0
#include "core/slurm/step_check.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <utility>

#include "core/base/bytes.hpp"
#include "core/base/numbers.hpp"

namespace sddp {
namespace {

constexpr std::uint8_t kCheckVersion = 1;
// Per field: an address, a host name or one error message fits; the record stays under
// kCheckRecordBytes with every field at its cap (14 strings * (4 + 140) + 5 numbers).
constexpr std::size_t kMaxCheckField = 140;
static_assert(std::size_t{14} * (4 + kMaxCheckField) + std::size_t{5} * 4 <= kCheckRecordBytes);

void put_str(Bytes& out, std::string_view s) {
    s = s.substr(0, kMaxCheckField);
    put_be32(out, static_cast<std::uint32_t>(s.size()));
    out.insert(out.end(), s.begin(), s.end());
}

// The record's fields over core's reader: a length-prefixed string never longer than a field.
class Reader {
  public:
    explicit Reader(std::span<const std::uint8_t> b) : in_(b) {}
    bool u32(std::uint32_t& v) {
        auto got = in_.u32();
        if (got) v = *got;
        return got.has_value();
    }
    bool str(std::string& s) {
        std::uint32_t n = 0;
        if (!u32(n) || n > kMaxCheckField) return false;
        auto bytes = in_.take(n);
        if (!bytes) return false;
        s.assign(bytes->begin(), bytes->end());
        return true;
    }
    // The rest is padding: zeros only, or this is not a record of ours.
    bool padding() {
        auto rest = in_.take(in_.remaining());
        return rest &&
               std::all_of(rest->begin(), rest->end(), [](std::uint8_t c) { return c == 0; });
    }

  private:
    BigEndianReader in_;
};

std::string node(const CheckRecord& r) {
    return "node " + r.host;
}
std::string who(const CheckRecord& r) {
    return "rank " + std::to_string(r.rank) + " on " + r.host;
}

// `master_is_remote`: this record's node is not rank 0's, so MASTER_ADDR must not be loopback.
std::vector<CheckProblem> problems_of(const CheckRecord& r, bool multi_node,
                                      bool master_is_remote) {
    std::vector<CheckProblem> out;
    auto add = [&](std::string where, std::string seen, std::string fix) {
        out.push_back({std::move(where), std::move(seen), std::move(fix), {r.rank}});
    };
    const std::string name = quote_value(r.host);
    if (multi_node && !r.host_error.empty()) {
        add(node(r), "its own name " + name + " does not resolve (" + r.host_error + ")",
            "add " + name + " with its network address to /etc/hosts or DNS on " + r.host +
                " (gloo and NCCL look it up)");
    } else if (multi_node && is_loopback_address(r.host_address)) {
        add(node(r),
            "its own name " + name + " resolves to " + r.host_address +
                " (loopback), so gloo advertises an address no other node can reach and "
                "init_process_group hangs",
            "in " + r.host + "'s /etc/hosts map " + name +
                " to its network address (drop the 127.0.1.1 line), or set GLOO_SOCKET_IFNAME "
                "to the interface between the nodes");
    }
    const std::string master = "MASTER_ADDR " + quote_value(r.master_addr);
    if (!r.master_error.empty()) {
        add(node(r), master + " does not resolve (" + r.master_error + ")",
            "ranks here cannot reach rank 0: add it to /etc/hosts or DNS on " + r.host +
                ", or use a name or address every node knows (--ddp=addr=HOST or "
                "--ddp=addr-suffix=SUFFIX)");
    } else if (master_is_remote && is_loopback_address(r.master_address)) {
        add(node(r),
            master + " resolves to " + r.master_address +
                " (loopback) here, but rank 0 runs on another node",
            "ranks here would connect to themselves: fix the name in " + r.host +
                "'s /etc/hosts or give rank 0's network address with --ddp=addr=ADDRESS");
    } else if (!r.interface_error.empty()) {
        add(node(r), "no route to " + master + " (" + r.master_address + "): " + r.interface_error,
            "check the routes and firewall between " + r.host + " and rank 0's node");
    }
    if (!r.port_error.empty()) {
        const std::string port = std::to_string(r.master_port);
        add(who(r), "MASTER_PORT " + port + " cannot be listened on: " + r.port_error,
            "another process holds it (see `ss -ltnp 'sport = :" + port + "'` on " + r.host +
                "): stop it, or pick a free port with --ddp=port=N");
    }
    if (!r.gpu_error.empty()) {
        add(who(r), r.gpu_error,
            "check the job's GPU request (--gres=gpu:N, --gpus-per-task=1) and the device "
            "permissions on " +
                r.host);
    }
    return out;
}

// Node-wide problems come once per node, naming every rank there that saw them.
void add_merged(std::vector<CheckProblem>& all, CheckProblem p) {
    for (auto& q : all) {
        if (q.where == p.where && q.seen == p.seen && q.fix == p.fix) {
            q.ranks.insert(q.ranks.end(), p.ranks.begin(), p.ranks.end());
            return;
        }
    }
    all.push_back(std::move(p));
}

std::string json_array(const std::vector<std::string>& items) {
    std::string out = "[";
    for (std::size_t i = 0; i < items.size(); ++i) out += (i ? "," : "") + items[i];
    return out + "]";
}

std::string pad(std::string s, std::size_t width) {
    if (s.size() < width) s.append(width - s.size(), ' ');
    return s;
}

}  // namespace

bool is_loopback_address(const std::string& a) {
    return a.rfind("127.", 0) == 0 || a == "::1" || a.rfind("::ffff:127.", 0) == 0;
}

Result<std::string> judge_master_address(const std::string& master_addr,
                                         const std::vector<std::string>& addresses,
                                         const std::string& resolve_error,
                                         const std::string& host) {
    const std::string name = "MASTER_ADDR " + quote_value(master_addr);
    if (addresses.empty()) {
        return make_error(Errc::invalid_input,
                          name + " does not resolve on host " + quote_value(host) + " (" +
                              (resolve_error.empty() ? "no address" : resolve_error) +
                              "), and rank 0 runs on another node: add it to /etc/hosts or DNS "
                              "there, or use a name or address every node knows (--ddp=addr=HOST "
                              "or --ddp=addr-suffix=SUFFIX); `srun --ddp slurm-ddp check` checks "
                              "every node");
    }
    for (const auto& a : addresses) {
        if (!is_loopback_address(a)) return std::string();
    }
    return name + " resolves to " + addresses.front() + " (loopback) on host " + quote_value(host) +
           ", but rank 0 runs on another node: unless the nodes share this host's network, this "
           "rank connects to itself and waits out the timeout. Fix the name in this node's "
           "/etc/hosts or give rank 0's network address with --ddp=addr=ADDRESS; `srun --ddp "
           "slurm-ddp check` checks every node";
}

std::vector<std::uint8_t> encode_check_record(const CheckRecord& r) {
    Bytes out;
    out.reserve(kCheckRecordBytes);
    put_be32(out, kCheckVersion);
    put_be32(out, r.rank);
    put_be32(out, r.world_size);
    put_be32(out, static_cast<std::uint32_t>(r.node_rank));
    put_be32(out, r.master_port);
    for (const std::string* s :
         {&r.host, &r.host_address, &r.host_error, &r.master_addr, &r.master_address,
          &r.master_error, &r.interface, &r.interface_error, &r.port_error, &r.gpu, &r.gpu_key,
          &r.gpu_error, &r.versions, &r.network}) {
        put_str(out, *s);
    }
    out.resize(kCheckRecordBytes, 0);
    return out;
}

Result<CheckRecord> decode_check_record(std::span<const std::uint8_t> bytes) {
    Reader in(bytes);
    CheckRecord r;
    std::uint32_t version = 0;
    std::uint32_t node_rank = 0;
    if (!in.u32(version) || version != kCheckVersion) {
        return make_error(Errc::protocol, "a check record has version " + std::to_string(version) +
                                              ", not " + std::to_string(kCheckVersion) +
                                              ": run the same slurm-ddp release on every node");
    }
    bool good =
        in.u32(r.rank) && in.u32(r.world_size) && in.u32(node_rank) && in.u32(r.master_port);
    for (std::string* s :
         {&r.host, &r.host_address, &r.host_error, &r.master_addr, &r.master_address,
          &r.master_error, &r.interface, &r.interface_error, &r.port_error, &r.gpu, &r.gpu_key,
          &r.gpu_error, &r.versions, &r.network}) {
        good = good && in.str(*s);
    }
    if (!good || !in.padding() || bytes.size() != kCheckRecordBytes) {
        return make_error(Errc::protocol, "a check record of " + std::to_string(bytes.size()) +
                                              " bytes is malformed");
    }
    r.node_rank = static_cast<std::int32_t>(node_rank);
    return r;
}

std::vector<CheckProblem> local_problems(const CheckRecord& r, bool multi_node) {
    return problems_of(r, multi_node, multi_node && r.node_rank > 0);
}

std::vector<CheckProblem> judge_step(const std::vector<CheckRecord>& all) {
    std::vector<CheckProblem> out;
    if (all.empty()) return out;
    const CheckRecord& zero = all.front();
    // Loopback reaches rank 0 from every "node" that shares its network stack; only ranks on
    // another stack (a real other node) must not see MASTER_ADDR or their own name on loopback.
    std::set<std::string> networks;
    for (const auto& r : all) networks.insert(r.network.empty() ? "host " + r.host : r.network);
    const bool multi_node = networks.size() > 1;
    auto remote = [&](const CheckRecord& r) {
        return r.host != zero.host && (r.network.empty() || r.network != zero.network);
    };

    for (const auto& r : all) {
        for (auto& p : problems_of(r, multi_node, remote(r))) add_merged(out, p);
    }
    // MASTER_ADDR must name one machine everywhere. Loopback answers are reported above.
    for (const auto& r : all) {
        if (r.host == zero.host || r.master_address.empty() || zero.master_address.empty() ||
            is_loopback_address(r.master_address) || is_loopback_address(zero.master_address) ||
            r.master_address == zero.master_address) {
            continue;
        }
        add_merged(
            out, {node(r),
                  "MASTER_ADDR " + quote_value(r.master_addr) + " resolves to " + r.master_address +
                      " here but to " + zero.master_address + " on rank 0's node " + zero.host,
                  "the nodes' /etc/hosts or DNS disagree (NodeHostname/NodeAddr differ "
                  "from NodeName?): make the name resolve to one address everywhere, or "
                  "use --ddp=addr=ADDRESS",
                  {r.rank}});
    }
    // Same host and same device = one GPU for two ranks: NCCL's "Duplicate GPU detected".
    std::map<std::pair<std::string, std::string>, const CheckRecord*> owner;
    for (const auto& r : all) {
        if (r.gpu_key.empty()) continue;
        auto [it, inserted] = owner.emplace(std::make_pair(r.host, r.gpu_key), &r);
        if (inserted) continue;
        const CheckRecord& first = *it->second;
        out.push_back({"ranks " + std::to_string(first.rank) + " and " + std::to_string(r.rank) +
                           " on " + r.host,
                       "both use GPU " + r.gpu + ", so NCCL fails with \"Duplicate GPU detected\"",
                       "give each task its own GPU: --ddp=gpu-bind=local (or --gpus-per-task=1), "
                       "or no more tasks per node than GPUs",
                       {first.rank, r.rank}});
    }
    for (const auto& r : all) {
        if (r.versions == zero.versions) continue;
        add_merged(out, {node(r),
                         "runs " + quote_value(r.versions) + " but rank 0's node runs " +
                             quote_value(zero.versions),
                         "install the same slurm-ddp and driver release on every node",
                         {r.rank}});
    }
    return out;
}

std::string verdict_line(std::size_t ranks, const std::vector<CheckProblem>& problems) {
    if (problems.empty()) {
        return "slurm-ddp check: OK: " + std::to_string(ranks) + (ranks == 1 ? " rank" : " ranks") +
               " can rendezvous; no problem found";
    }
    return "slurm-ddp check: FAILED: " + std::to_string(problems.size()) +
           (problems.size() == 1 ? " problem" : " problems") + " (see above)";
}

std::string format_check_report(const std::vector<CheckRecord>& all,
                                const std::vector<CheckProblem>& problems) {
    std::set<std::uint32_t> failed;
    for (const auto& p : problems) failed.insert(p.ranks.begin(), p.ranks.end());
    struct Row {
        std::string cells[6];
    };
    std::vector<Row> rows;
    rows.push_back({{"rank", "host", "MASTER_ADDR", "interface", "GPU", "verdict"}});
    for (const auto& r : all) {
        std::string master = r.master_addr.empty() ? "-" : r.master_addr;
        if (!r.master_address.empty() && r.master_address != r.master_addr) {
            master += " -> " + r.master_address;
        } else if (!r.master_error.empty()) {
            master += " -> unresolved";
        }
        rows.push_back(
            {{std::to_string(r.rank), r.host, master, r.interface.empty() ? "-" : r.interface,
              r.gpu.empty() ? "none" : r.gpu, failed.count(r.rank) ? "FAIL" : "ok"}});
    }
    std::size_t width[6] = {};
    for (const auto& row : rows)
        for (int c = 0; c < 6; ++c) width[c] = std::max(width[c], row.cells[c].size());
    std::string out;
    for (const auto& row : rows) {
        std::string line;
        for (int c = 0; c < 6; ++c) line += c < 5 ? pad(row.cells[c], width[c] + 2) : row.cells[c];
        out += line + "\n";
    }
    for (const auto& p : problems) out += "problem: " + p.line() + "\n";
    return out + verdict_line(all.size(), problems) + "\n";
}

std::string json_quote(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20) {
            const char ch = static_cast<char>(c);
            out += "\\u00" + to_hex(std::string_view(&ch, 1));
        } else {
            out += static_cast<char>(c);
        }
    }
    return out + "\"";
}

std::string format_check_json(const std::vector<CheckRecord>& all,
                              const std::vector<CheckProblem>& problems,
                              const std::optional<std::string>& exchange_error) {
    std::set<std::uint32_t> failed;
    for (const auto& p : problems) failed.insert(p.ranks.begin(), p.ranks.end());
    std::vector<std::string> ranks;
    ranks.reserve(all.size());
    for (const auto& r : all) {
        ranks.push_back("{\"rank\":" + std::to_string(r.rank) + ",\"host\":" + json_quote(r.host) +
                        ",\"master_addr\":" + json_quote(r.master_addr) + ",\"master_address\":" +
                        json_quote(r.master_address) + ",\"interface\":" + json_quote(r.interface) +
                        ",\"gpu\":" + json_quote(r.gpu) +
                        ",\"verdict\":" + json_quote(failed.count(r.rank) ? "FAIL" : "ok") + "}");
    }
    std::vector<std::string> lines;
    for (const auto& p : problems) {
        std::vector<std::string> rs;
        for (auto r : p.ranks) rs.push_back(std::to_string(r));
        lines.push_back("{\"where\":" + json_quote(p.where) + ",\"seen\":" + json_quote(p.seen) +
                        ",\"fix\":" + json_quote(p.fix) + ",\"ranks\":" + json_array(rs) + "}");
    }
    const bool healthy = problems.empty() && !exchange_error;
    return "{\"healthy\":" + std::string(healthy ? "true" : "false") +
           ",\"exchange_error\":" + (exchange_error ? json_quote(*exchange_error) : "null") +
           ",\"ranks\":" + json_array(ranks) + ",\"problems\":" + json_array(lines) + "}\n";
}

std::vector<std::uint32_t> missing_ranks_in(const std::string& message) {
    static constexpr std::string_view kTag = "missing ranks ";
    std::vector<std::uint32_t> out;
    const auto at = message.find(kTag);
    if (at == std::string::npos) return out;
    std::size_t i = at + kTag.size();
    // "1,3-5": numbers and ranges, up to the first other character. Capped: a message about a
    // huge step lists ranges, and the report names nodes, not every rank.
    while (i < message.size() && out.size() < 100000) {
        std::size_t j = i;
        while (j < message.size() && message[j] >= '0' && message[j] <= '9') ++j;
        if (j == i) break;
        auto lo = parse_decimal(std::string_view(message).substr(i, j - i), 0xffffffffu);
        if (!lo) break;
        std::uint64_t hi = *lo;
        if (j < message.size() && message[j] == '-') {
            std::size_t k = j + 1;
            while (k < message.size() && message[k] >= '0' && message[k] <= '9') ++k;
            auto h = parse_decimal(std::string_view(message).substr(j + 1, k - j - 1), 0xffffffffu);
            if (!h || *h < *lo) break;
            hi = *h;
            j = k;
        }
        for (std::uint64_t r = *lo; r <= hi && out.size() < 100000; ++r) {
            out.push_back(static_cast<std::uint32_t>(r));
        }
        if (j >= message.size() || message[j] != ',') break;
        i = j + 1;
    }
    return out;
}

std::vector<CheckProblem> missing_node_problems(
    const std::vector<std::uint32_t>& missing, const std::vector<std::string>& nodes,
    const std::vector<std::vector<std::uint32_t>>& ranks_per_node, const std::string& rank0_host,
    std::uint32_t timeout_s) {
    std::vector<CheckProblem> out;
    const std::set<std::uint32_t> gone(missing.begin(), missing.end());
    for (std::size_t n = 0; n < nodes.size() && n < ranks_per_node.size(); ++n) {
        CheckProblem p;
        for (auto r : ranks_per_node[n])
            if (gone.count(r)) p.ranks.push_back(r);
        if (p.ranks.empty()) continue;
        std::string list;
        for (std::size_t i = 0; i < p.ranks.size() && i < 8; ++i) {
            list += (i ? "," : "") + std::to_string(p.ranks[i]);
        }
        if (p.ranks.size() > 8) list += ",...";
        p.where = "node " + nodes[n];
        p.seen = std::string(p.ranks.size() == 1 ? "rank " : "ranks ") + list +
                 " did not join the rendezvous within " + std::to_string(timeout_s) + " s";
        p.fix = "the node is down, cut off from " + rank0_host +
                " (routes, firewall), or its task failed first (its own lines say why); see "
                "`scontrol show node " +
                nodes[n] + "`, or leave it out with --exclude=" + nodes[n];
        out.push_back(std::move(p));
    }
    return out;
}

}  // namespace sddp

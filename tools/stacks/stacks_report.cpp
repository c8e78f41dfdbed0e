// SPDX-License-Identifier: Apache-2.0
#include "stacks/stacks_report.hpp"

#include <algorithm>
#include <set>

#include "core/base/numbers.hpp"
#include "core/slurm/hostlist.hpp"
#include "rendezvous/tcp/message_text.hpp"

namespace sddp::stacks {
namespace {

constexpr std::string_view kTag = "SDDP-STACK\t";

std::string clean(std::string_view s) {
    std::string out(s);
    std::replace(out.begin(), out.end(), '\t', ' ');
    std::replace(out.begin(), out.end(), '\n', ' ');
    return out;
}

std::vector<std::string> split_tabs(std::string_view s) {
    std::vector<std::string> out;
    for (;;) {
        const auto tab = s.find('\t');
        out.emplace_back(s.substr(0, tab));
        if (tab == std::string_view::npos) break;
        s.remove_prefix(tab + 1);
    }
    return out;
}

std::string rank_field(const std::optional<long>& r) {
    return r ? std::to_string(*r) : std::string("-");
}

// Host names in first-seen order, compressed.
std::string hosts_of(const std::vector<const RankStack*>& members) {
    std::vector<std::string> hosts;
    for (const auto* m : members) {
        if (std::find(hosts.begin(), hosts.end(), m->host) == hosts.end()) hosts.push_back(m->host);
    }
    std::sort(hosts.begin(), hosts.end());
    return compress_hostlist(hosts);
}

}  // namespace

std::string encode_records(const std::string& host, const std::vector<RankStack>& ranks,
                           const std::vector<std::string>& node_errors) {
    std::string out;
    const std::string h = clean(host);
    auto line = [&](const std::string& kind, const std::string& rank, int pid,
                    const std::string& rest) {
        out += std::string(kTag) + kind + "\t" + h + "\t" + rank + "\t" + std::to_string(pid) +
               "\t" + rest + "\n";
    };
    for (const auto& r : ranks) {
        const std::string rank = rank_field(r.rank);
        line("rank", rank, r.pid, clean(r.tool) + "\t" + clean(r.comm) + "\t" + clean(r.note));
        for (const auto& f : r.frames) line("frame", rank, r.pid, clean(f));
        if (!r.error.empty()) line("error", rank, r.pid, clean(r.error));
    }
    for (const auto& e : node_errors) line("node-error", "-", 0, clean(e));
    line("done", "-", 0, std::to_string(ranks.size()));
    return out;
}

Collected decode_records(std::string_view text) {
    Collected c;
    std::map<std::pair<std::string, int>, std::size_t> index;  // (host, pid) -> c.ranks
    while (!text.empty()) {
        const auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        const auto at = line.find(kTag);
        if (at == std::string_view::npos) continue;
        const auto f = split_tabs(line.substr(at + kTag.size()));
        if (f.size() < 5) continue;
        const std::string& kind = f[0];
        const std::string& host = f[1];
        const auto pid_value = parse_decimal(f[3], 1u << 30);
        const int pid = pid_value ? static_cast<int>(*pid_value) : 0;
        if (kind == "node-error") {
            c.node_errors[host].push_back(f[4]);
            continue;
        }
        if (kind == "done") {
            c.nodes_done.push_back(host);
            continue;
        }
        const auto key = std::make_pair(host, pid);
        if (kind == "rank") {
            RankStack r;
            r.host = host;
            if (const auto v = parse_decimal(f[2], 1u << 30)) r.rank = static_cast<long>(*v);
            r.pid = pid;
            r.tool = f[4];
            if (f.size() > 5) r.comm = f[5];
            if (f.size() > 6) r.note = f[6];
            index[key] = c.ranks.size();
            c.ranks.push_back(std::move(r));
            continue;
        }
        const auto it = index.find(key);
        if (it == index.end()) continue;
        if (kind == "frame") c.ranks[it->second].frames.push_back(f[4]);
        if (kind == "error") c.ranks[it->second].error = f[4];
    }
    std::stable_sort(c.ranks.begin(), c.ranks.end(), [](const RankStack& a, const RankStack& b) {
        return std::make_pair(a.rank.value_or(-1), a.pid) <
               std::make_pair(b.rank.value_or(-1), b.pid);
    });
    return c;
}

std::vector<StackGroup> group_stacks(const std::vector<RankStack>& ranks) {
    std::map<std::vector<std::string>, StackGroup> by_frames;
    for (const auto& r : ranks) {
        if (!r.error.empty()) continue;
        by_frames[r.frames].members.push_back(&r);
    }
    std::vector<StackGroup> out;
    out.reserve(by_frames.size());
    for (auto& [frames, g] : by_frames) out.push_back(std::move(g));
    const auto first = [](const StackGroup& g) {
        long low = -1;
        for (const auto* m : g.members) {
            if (m->rank && (low < 0 || *m->rank < low)) low = *m->rank;
        }
        return low;
    };
    std::sort(out.begin(), out.end(), [&](const StackGroup& a, const StackGroup& b) {
        if (a.members.size() != b.members.size()) return a.members.size() < b.members.size();
        return first(a) < first(b);
    });
    return out;
}

std::string describe_members(const std::vector<const RankStack*>& members) {
    std::vector<int> ranks;
    std::string others;
    for (const auto* m : members) {
        if (m->rank) {
            ranks.push_back(static_cast<int>(*m->rank));
        } else {
            others += (others.empty() ? "" : ", ") + std::string("pid ") + std::to_string(m->pid) +
                      (m->comm.empty() ? "" : " (" + m->comm + ")");
        }
    }
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    std::string out;
    if (!ranks.empty()) {
        out = (ranks.size() == 1 ? "rank " : "ranks ") + tcp::format_rank_list(ranks);
    }
    if (!others.empty()) out += (out.empty() ? "" : ", ") + others;
    return out;
}

std::string format_groups(const std::vector<StackGroup>& groups) {
    std::string out;
    for (const auto& g : groups) {
        std::set<std::string> tools;
        std::set<std::string> notes;
        for (const auto* m : g.members) {
            tools.insert(m->tool);
            if (!m->note.empty()) notes.insert(m->note);
        }
        std::string tool_list;
        for (const auto& t : tools) tool_list += (tool_list.empty() ? "" : "+") + t;
        const std::size_t n = g.members.size();
        out += "=== " + std::to_string(n) + (n == 1 ? " process: " : " processes: ") +
               describe_members(g.members) + " (" + hosts_of(g.members);
        if (n == 1) out += " pid " + std::to_string(g.members.front()->pid);
        out += ", " + tool_list + ")\n";
        for (const auto& note : notes) out += "note: " + note + "\n";
        const auto& frames = g.members.front()->frames;
        if (frames.empty()) out += "    (no frames)\n";
        for (const auto& f : frames) out += f + "\n";
        out += "\n";
    }
    return out;
}

}  // namespace sddp::stacks

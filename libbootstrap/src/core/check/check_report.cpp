// SPDX-License-Identifier: Apache-2.0
#include "core/check/check_report.hpp"

#include <algorithm>
#include <cstdint>
#include <set>

#include "core/base/bytes.hpp"

namespace sddp {
namespace {

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

}  // namespace sddp

// SPDX-License-Identifier: Apache-2.0
#include "core/slurm/job_gres.hpp"

#include <cstdlib>
#include <vector>

#include "core/slurm/hostlist.hpp"

namespace sddp {
namespace {

// The value of `key=` in a line of space-separated key=value fields ("" when absent).
std::string_view field(std::string_view line, std::string_view key) {
    for (std::size_t at = 0; (at = line.find(key, at)) != std::string_view::npos; ++at) {
        if ((at == 0 || line[at - 1] == ' ') && line.substr(at + key.size(), 1) == "=") {
            const std::size_t start = at + key.size() + 1;
            return line.substr(start, line.find(' ', start) - start);
        }
    }
    return {};
}

// "0-3,5" -> "0,1,2,3,5"; nullopt on anything else.
std::optional<std::string> expand_ranges(std::string_view ranges) {
    std::string out;
    std::size_t start = 0;
    while (start <= ranges.size()) {
        const std::size_t comma = ranges.find(',', start);
        const std::string item(ranges.substr(start, comma - start));
        char* end = nullptr;
        const long lo = std::strtol(item.c_str(), &end, 10);
        long hi = lo;
        if (end == item.c_str() || lo < 0) return std::nullopt;
        if (*end == '-') {
            const char* from = end + 1;
            hi = std::strtol(from, &end, 10);
            if (end == from || hi < lo || hi - lo > 4096) return std::nullopt;
        }
        if (*end != 0) return std::nullopt;
        for (long i = lo; i <= hi; ++i) out += (out.empty() ? "" : ",") + std::to_string(i);
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    return out.empty() ? std::nullopt : std::optional<std::string>(out);
}

}  // namespace

std::optional<std::string> job_gpu_indices(std::string_view text, std::string_view node) {
    std::size_t pos = 0;
    while (pos < text.size()) {
        const std::size_t eol = text.find('\n', pos);
        std::string_view line = text.substr(pos, eol - pos);
        pos = eol == std::string_view::npos ? text.size() : eol + 1;
        while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
        const std::string_view nodes = field(line, "Nodes");
        const std::string_view gres = field(line, "GRES");
        if (nodes.empty() || gres.empty()) continue;
        auto hosts = expand_hostlist(nodes);
        if (!hosts) continue;
        bool here = false;
        for (const auto& h : *hosts) here = here || h == node;
        if (!here) continue;
        // "gpu:4(IDX:0-3)", "gpu:a100:2(IDX:0,2)", several kinds separated by commas outside
        // the parentheses.
        for (std::size_t g = gres.find("gpu:"); g != std::string_view::npos;
             g = gres.find("gpu:", g + 1)) {
            if (g != 0 && gres[g - 1] != ',') continue;
            const std::size_t idx = gres.find("(IDX:", g);
            const std::size_t close = gres.find(')', idx);
            if (idx == std::string_view::npos || close == std::string_view::npos) continue;
            return expand_ranges(gres.substr(idx + 5, close - idx - 5));
        }
    }
    return std::nullopt;
}

}  // namespace sddp

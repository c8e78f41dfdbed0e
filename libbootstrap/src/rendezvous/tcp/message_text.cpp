// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/tcp/message_text.hpp"

#include <algorithm>
#include <cstdio>

namespace sddp::tcp {

std::string format_rank_list(std::vector<int> ranks, std::size_t max_ranges) {
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    std::string out;
    std::size_t ranges = 0;
    std::size_t i = 0;
    while (i < ranks.size()) {
        std::size_t j = i;
        while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
        if (ranges == max_ranges) {
            out += ",... (" + std::to_string(ranks.size() - i) + " more)";
            break;
        }
        if (!out.empty()) out += ',';
        out += std::to_string(ranks[i]);
        if (j > i) out += '-' + std::to_string(ranks[j]);
        ++ranges;
        i = j + 1;
    }
    return out;
}

std::string seconds_text(Clock::duration d) {
    char buf[32];
    (void)std::snprintf(buf, sizeof buf, "%.1f s", std::chrono::duration<double>(d).count());
    return buf;
}

}  // namespace sddp::tcp

// SPDX-License-Identifier: Apache-2.0
#include "core/gpu/cpu_bind_list.hpp"

#include <string>

#include "core/base/bytes.hpp"
#include "core/base/numbers.hpp"

namespace sddp {
namespace {

Error bad_mask(std::string_view list, std::string_view mask, const char* why) {
    return make_error(Errc::invalid_input,
                      "SLURM_CPU_BIND_LIST=" + quote_value(list) + " has mask " +
                          quote_value(mask) + ": " + why +
                          "; expected hex CPU masks separated by commas, e.g. 0x3,0xC");
}

}  // namespace

Result<std::vector<std::vector<int>>> parse_cpu_bind_list(std::string_view text) {
    std::vector<std::vector<int>> out;
    std::string_view rest = text;
    while (true) {
        const auto comma = rest.find(',');
        std::string_view mask = rest.substr(0, comma);
        const std::string_view shown = mask;
        if (mask.size() > 2 && mask[0] == '0' && (mask[1] == 'x' || mask[1] == 'X')) {
            mask.remove_prefix(2);
        }
        if (mask.empty()) return bad_mask(text, shown, "it is empty");
        if (mask.size() * 4 > static_cast<std::size_t>(kMaxCpuIndex)) {
            return bad_mask(text, shown, "it is longer than any node's CPU count");
        }
        std::vector<int> cpus;
        // The last hex digit holds CPUs 0-3, the one before it CPUs 4-7, and so on.
        for (std::size_t i = 0; i < mask.size(); ++i) {
            const int d = hex_digit(mask[mask.size() - 1 - i]);
            if (d < 0) return bad_mask(text, shown, "it is not hexadecimal");
            for (int bit = 0; bit < 4; ++bit) {
                if ((d >> bit) & 1) cpus.push_back(static_cast<int>(i) * 4 + bit);
            }
        }
        if (cpus.empty()) return bad_mask(text, shown, "it selects no CPU");
        out.push_back(std::move(cpus));
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    return out;
}

}  // namespace sddp

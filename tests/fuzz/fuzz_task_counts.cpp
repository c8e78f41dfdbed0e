// SPDX-License-Identifier: Apache-2.0
// Properties: parsing never crashes; an accepted spec re-encoded in Slurm's own N(xM) form parses
// back to the same counts; rejections carry a message and one of the two expected codes.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "core/slurm/task_counts.hpp"

namespace {

constexpr std::size_t kFuzzCap = 4096;

void require(bool ok, const char* what, std::string_view input) {
    if (ok) return;
    std::fprintf(stderr, "property violated: %s\ninput: '%.*s'\n", what,
                 static_cast<int>(input.size()), input.data());
    std::abort();
}

std::string encode(const std::vector<std::uint32_t>& counts) {
    std::string out;
    for (std::size_t i = 0; i < counts.size();) {
        std::size_t j = i;
        while (j < counts.size() && counts[j] == counts[i]) ++j;
        if (!out.empty()) out += ',';
        out += std::to_string(counts[i]);
        if (j - i > 1) out += "(x" + std::to_string(j - i) + ")";
        i = j;
    }
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    auto counts = sddp::expand_task_counts(input, kFuzzCap);
    if (!counts) {
        const auto& err = counts.error();
        require(!err.message.empty(), "error without a message", input);
        require(err.code == sddp::Errc::invalid_input || err.code == sddp::Errc::too_large,
                "unexpected error code", input);
        return 0;
    }
    require(!counts->empty() && counts->size() <= kFuzzCap, "entry count out of bounds", input);
    auto again = sddp::expand_task_counts(encode(*counts), kFuzzCap);
    require(again.ok() && *again == *counts, "re-encoded counts differ", input);
    return 0;
}

// SPDX-License-Identifier: Apache-2.0
// Fuzz the --ddp option and plugin-argument parser. Properties: never crash; an accepted value
// describes itself canonically, and the canonical text parses back to the same description.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "core/options/options.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);

    if (auto user = sddp::parse_user_options(text)) {
        const std::string canon = sddp::describe_options(*user);
        auto again = sddp::parse_user_options(canon);
        if (!again || sddp::describe_options(*again) != canon) std::abort();
    } else if (user.error().message.empty()) {
        std::abort();  // every refusal must say why
    }

    // Plugin arguments: NUL separates the words of the plugstack.conf line.
    std::vector<std::string> args;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= text.size(); ++i) {
        if (i == text.size() || text[i] == '\0') {
            args.emplace_back(text.substr(start, i - start));
            start = i + 1;
        }
    }
    if (auto site = sddp::parse_site_arguments(args)) {
        auto merged = sddp::merge_options(*site, sddp::DdpOptions{});
        if (sddp::describe_options(merged) != sddp::describe_options(*site)) std::abort();
    }
    return 0;
}

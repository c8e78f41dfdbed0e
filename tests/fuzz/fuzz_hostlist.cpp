// SPDX-License-Identifier: Apache-2.0
// Properties: expanding never crashes or hangs; an accepted list compresses to a list that
// expands to the same hosts; first_hostlist_host agrees with the expansion and rejects exactly
// the lists that expand_hostlist rejects as malformed.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "core/slurm/hostlist.hpp"

namespace {

// Small enough to keep each input fast; big inputs still exercise the cap path. The compressed
// list of kFuzzCap names of kMaxHostNameLength characters that do not compress must stay well
// under the smoke test's -malloc_limit_mb=1 (4096 such names made a legitimate 1 MiB string).
constexpr std::size_t kFuzzCap = 1024;
static_assert(kFuzzCap * (sddp::kMaxHostNameLength + 1) <= 512 * 1024);

void require(bool ok, const char* what, std::string_view input) {
    if (ok) return;
    std::fprintf(stderr, "property violated: %s\ninput: '%.*s'\n", what,
                 static_cast<int>(input.size()), input.data());
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    auto hosts = sddp::expand_hostlist(input, kFuzzCap);
    auto first = sddp::first_hostlist_host(input);
    if (!hosts) {
        const auto& err = hosts.error();
        require(!err.message.empty(), "error without a message", input);
        if (err.code == sddp::Errc::too_large) {
            require(first.ok(), "first_hostlist_host rejects a well-formed list", input);
        } else {
            require(err.code == sddp::Errc::invalid_input, "unexpected error code", input);
            require(!first.ok() && first.error().message == err.message,
                    "first_hostlist_host disagrees on a malformed list", input);
        }
        return 0;
    }
    require(!hosts->empty() && hosts->size() <= kFuzzCap, "host count out of bounds", input);
    require(first.ok() && *first == hosts->front(), "first host differs from expansion", input);
    const auto compressed = sddp::compress_hostlist(*hosts);
    auto again = sddp::expand_hostlist(compressed, kFuzzCap);
    require(again.ok(), "compressed list does not expand", input);
    require(*again == *hosts, "expand(compress(hosts)) != hosts", input);
    return 0;
}

// SPDX-License-Identifier: Apache-2.0
// Properties: parsing a SLURM_HOSTFILE never crashes and places at most `max_ranks` ranks in
// runs of at least one; memory stays proportional to the input (runs, not one entry per rank:
// "n1*16000000" is one run); the check against a step never crashes and accepts only a file
// that puts this task's rank on this task's node.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "core/slurm/hostfile.hpp"

namespace {

// Hostlist lines expand one rank per host, up to the ranks asked for: keep that small here.
constexpr std::uint32_t kMaxRanks = 4096;

void require(bool ok, const char* what, std::string_view input) {
    if (ok) return;
    std::fprintf(stderr, "property violated: %s\ninput: '%.*s'\n", what,
                 static_cast<int>(input.size()), input.data());
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    // host*count never expands: "n1*16000000" is one run whatever the cap.
    for (std::uint32_t max_ranks : {3u, kMaxRanks}) {
        auto runs = sddp::parse_hostfile(input, max_ranks);
        if (!runs) {
            require(!runs.error().message.empty(), "error without a message", input);
            continue;
        }
        std::uint64_t total = 0;
        for (const auto& r : *runs) {
            require(r.count >= 1 && !r.host.empty(), "empty run", input);
            total += r.count;
        }
        require(total <= max_ranks, "more ranks than asked for", input);
        sddp::StepFacts f;
        f.ntasks = 3;
        f.nnodes = 2;
        f.procid = 1;
        f.nodes = {"n1", "n2"};
        f.tasks_per_node = {2, 1};
        f.node_name = "n1";
        auto host = sddp::hostfile_rank0_host(f, *runs, "/fuzz");
        if (host) require(total >= 3 && !host->empty(), "accepted a file too short", input);
    }
    return 0;
}

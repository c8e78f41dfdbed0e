// Healthy jobs of several sizes and shapes: every rank must get every result right.
#include <cstdio>

#include "harness.hpp"
#include "scenarios.hpp"

namespace sddp::mp {
namespace {

int healthy_job(const std::string& name, int world, int nodes, int rounds) {
    Checker check{name};
    Job job = make_job(name, world, nodes, milliseconds(20000));
    Children kids(static_cast<std::size_t>(world));
    const auto start = Clock::now();
    for (int r = 0; r < world; ++r) {
        kids.spawn("rank " + std::to_string(r),
                   [&job, r, rounds] { return run_rank(job.config(r), rounds); });
    }
    check.expect(kids.wait_all(milliseconds(40000)), "all ranks exit");
    const double secs = std::chrono::duration<double>(Clock::now() - start).count();
    for (std::size_t i = 0; i < kids.size(); ++i) check.expect_ok(kids, i);
    std::printf("  %d ranks on %d node(s), %d rounds: %.3f s wall (rank 0 reported %.3f s)\n",
                world, nodes, rounds, secs, kids.report(0).seconds);
    return check.failures;
}

}  // namespace

std::vector<Scenario> normal_scenarios() {
    return {
        {"world_1", [] { return healthy_job("world_1", 1, 1, 2); }},
        {"world_2", [] { return healthy_job("world_2", 2, 2, 3); }},
        {"world_8_flat", [] { return healthy_job("world_8_flat", 8, 8, 3); }},
        {"world_8_two_nodes", [] { return healthy_job("world_8_two_nodes", 8, 2, 3); }},
        {"world_64_four_nodes", [] { return healthy_job("world_64_four_nodes", 64, 4, 3); }},
        {"world_256_four_nodes", [] { return healthy_job("world_256_four_nodes", 256, 4, 2); }},
        {"world_256_flat", [] { return healthy_job("world_256_flat", 256, 256, 2); }},
    };
}

}  // namespace sddp::mp

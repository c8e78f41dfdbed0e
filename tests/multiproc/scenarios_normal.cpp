// SPDX-License-Identifier: Apache-2.0
// Healthy jobs of several sizes and shapes: every rank must get every result right.
#include <cstdint>
#include <cstdio>

#include "harness.hpp"
#include "rendezvous/preflight_exchange.hpp"
#include "rendezvous/tcp_transport.hpp"
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

// The preflight over the real transport: rank 5 claims rank 4's GPU and rank 6 could not select
// one. Every rank, on either exchange (gather + verdict, or allgather), must get the same verdict
// naming the first problem found (rank 6's error: errors are checked before duplicates).
int preflight_verdict(const std::string& name, int nodes, bool want_layout, bool faulty) {
    Checker check{name};
    const int world = 8;
    Job job = make_job(name, world, nodes, milliseconds(20000));
    Children kids(static_cast<std::size_t>(world));
    for (int r = 0; r < world; ++r) {
        kids.spawn("rank " + std::to_string(r), [&job, r, want_layout, faulty, nodes] {
            const auto start = Clock::now();
            const RendezvousConfig cfg = job.config(r);
            auto t = make_tcp_transport(cfg);
            if (!t.ok()) return report_error(t.error(), start);
            PreflightRecord mine;
            mine.step_tag = cfg.step_tag;
            mine.world_size = static_cast<std::uint32_t>(world);
            mine.rank = static_cast<std::uint32_t>(r);
            mine.host = "node" + std::to_string(cfg.node_rank);
            const int gpu = faulty && r == 5 ? 0 : cfg.local_rank;
            mine.pci_bus_id = "0000:" + std::to_string(10 + gpu) + ":00.0";
            mine.cuda_device = gpu;
            if (faulty && r == 6) mine.error = "no CUDA device is visible";
            auto out = run_preflight(**t, mine, want_layout);
            if (!out.ok()) return report_error(out.error(), start);
            if (out->layout.has_value() != want_layout) {
                return report_error(make_error(Errc::internal, "layout presence wrong"), start);
            }
            if (want_layout && (out->layout->num_nodes != static_cast<std::uint32_t>(nodes) ||
                                out->layout->node_of_rank[static_cast<std::size_t>(r)] !=
                                    static_cast<std::uint32_t>(cfg.node_rank))) {
                return report_error(make_error(Errc::internal, "layout wrong"), start);
            }
            if (!out->verdict.ok()) return report_error(out->verdict.error(), start);
            Report ok;
            ok.code = 0;
            return ok;
        });
    }
    check.expect(kids.wait_all(milliseconds(30000)), "all ranks exit");
    for (std::size_t i = 0; i < kids.size(); ++i) {
        if (faulty) {
            check.expect_error(kids, i, Errc::invalid_input,
                               {"rank 6 on 'node", "cannot continue: no CUDA device is visible"});
        } else {
            check.expect_ok(kids, i);
        }
    }
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
        {"preflight_gather_ok",
         [] { return preflight_verdict("preflight_gather_ok", 2, false, false); }},
        {"preflight_gather_faulty",
         [] { return preflight_verdict("preflight_gather_faulty", 2, false, true); }},
        {"preflight_allgather_ok",
         [] { return preflight_verdict("preflight_allgather_ok", 8, true, false); }},
        {"preflight_allgather_faulty",
         [] { return preflight_verdict("preflight_allgather_faulty", 8, true, true); }},
    };
}

}  // namespace sddp::mp

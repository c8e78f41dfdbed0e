// SPDX-License-Identifier: Apache-2.0
// The node leaders' k-ary tree with many simulated nodes and a small fanout (depth >= 3): every
// collective right, a killed middle leader named by every rank at once, a mismatch deep in the
// tree still caught. Every "node" is on 127.0.0.1; their leaders differ by port.
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <netinet/in.h>

#include <cstdint>
#include <cstdio>

#include "harness.hpp"
#include "rendezvous/protocol/leader_tree.hpp"
#include "scenarios.hpp"

namespace sddp::mp {
namespace {

using Hook = std::function<std::optional<Report>(Transport&, int)>;

std::vector<std::size_t> spawn_tree_job(Children& kids, const Job& job, int rounds,
                                        const std::function<Hook(int rank)>& hook_for) {
    std::vector<std::size_t> out;
    for (int r = 0; r < job.world; ++r) {
        Hook hook = hook_for ? hook_for(r) : Hook{};
        out.push_back(kids.spawn("rank " + std::to_string(r), [&job, r, rounds, hook] {
            return run_rank(job.config(r), rounds, hook);
        }));
    }
    return out;
}

int tree_healthy(const std::string& name, int world, int nodes, int fanout) {
    Checker check{name};
    check.expect(tree_depth(nodes, fanout) >= 3, "the tree has depth 3 or more");
    Job job = make_tree_job(name, world, nodes, fanout, milliseconds(20000));
    Children kids(static_cast<std::size_t>(world));
    const auto start = Clock::now();
    const std::vector<std::size_t> ranks = spawn_tree_job(kids, job, 3, {});
    check.expect(kids.wait_all(milliseconds(40000)), "all ranks exit");
    for (const std::size_t i : ranks) check.expect_ok(kids, i);
    std::printf("  %d ranks on %d node(s), fanout %d (depth %d): %.3f s wall\n", world, nodes,
                fanout, tree_depth(nodes, fanout),
                std::chrono::duration<double>(Clock::now() - start).count());
    return check.failures;
}

// Node 1's leader (rank 4, a middle leader: nodes 3 and 4 hang below it) is SIGKILLed in round 1
// after a complete round 0. Its parent (rank 0), its child leaders and its locals see the socket
// close; everyone else gets the abort: all must name it, long before the 20 s timeout.
int tree_middle_killed() {
    Checker check{"tree_middle_killed"};
    const int per_node = 4;
    const int nodes = 15;
    Job job = make_tree_job("tree_middle_killed", per_node * nodes, nodes, 2, milliseconds(20000));
    const int victim = 1 * per_node;
    Children kids(static_cast<std::size_t>(job.world));
    const std::vector<std::size_t> ranks = spawn_tree_job(kids, job, 3, [](int r) -> Hook {
        if (r != victim) return {};
        return [](Transport&, int round) -> std::optional<Report> {
            if (round == 1) ::raise(SIGKILL);
            return std::nullopt;
        };
    });
    check.expect(kids.wait_all(milliseconds(15000)), "no process hangs");
    for (int r = 0; r < job.world; ++r) {
        if (r == victim) continue;
        const std::size_t i = ranks[static_cast<std::size_t>(r)];
        check.expect_error(kids, i, Errc::peer_lost,
                           {"lost connection to rank 4 (node1, node leader of node 1"});
        check.expect_under(kids, i, 3.0);
    }
    return check.failures;
}

// A local rank of node 13 (depth 3: 13 -> 6 -> 2 -> 0) calls a barrier where everyone else
// broadcasts: the mismatch travels to every rank.
int tree_collective_mismatch() {
    Checker check{"tree_collective_mismatch"};
    const int per_node = 4;
    const int nodes = 15;
    Job job =
        make_tree_job("tree_collective_mismatch", per_node * nodes, nodes, 2, milliseconds(20000));
    const int odd = 13 * per_node + 2;
    Children kids(static_cast<std::size_t>(job.world));
    const std::vector<std::size_t> ranks = spawn_tree_job(kids, job, 1, [](int r) -> Hook {
        if (r != odd) return {};
        return [](Transport& t, int) -> std::optional<Report> {
            const auto start = Clock::now();
            const Status s = t.barrier();
            return s.ok() ? Report{99, 0, "mismatched barrier succeeded"}
                          : report_error(s.error(), start);
        };
    });
    check.expect(kids.wait_all(milliseconds(15000)), "no process hangs");
    for (const std::size_t i : ranks) {
        check.expect_error(kids, i, Errc::protocol, {"collective mismatch", "barrier #1"});
        check.expect_under(kids, i, 3.0);
    }
    return check.failures;
}

// Node 2's leader (a middle leader) never starts: its locals and the leaders below it cannot
// join, and rank 0 names exactly the ranks missing, with node 2 as the child that never came.
int tree_middle_never_joins() {
    Checker check{"tree_middle_never_joins"};
    const int per_node = 2;
    const int nodes = 15;
    Job job =
        make_tree_job("tree_middle_never_joins", per_node * nodes, nodes, 2, milliseconds(6000));
    Children kids(static_cast<std::size_t>(job.world));
    std::size_t root = 0;
    for (int r = 0; r < job.world; ++r) {
        if (r == 2 * per_node) continue;
        const std::size_t i = kids.spawn("rank " + std::to_string(r),
                                         [&job, r] { return run_rank(job.config(r), 1); });
        if (r == 0) root = i;
    }
    check.expect(kids.wait_all(milliseconds(10000)), "no process hangs");
    // Node 2's subtree: nodes 2, 5, 6, 11-14. The timeout leaves the rest of the world time to
    // join even under TSan with other tests beside it, so exactly that subtree is missing.
    check.expect_error(kids, root, Errc::timeout,
                       {"missing ranks 4-5,10-13,22-29", "child nodes 2 (127.0.0.1:"});
    for (std::size_t i = 0; i < kids.size(); ++i) check.expect_under(kids, i, 7.0);
    return check.failures;
}

// Node 3's ranks were started with another fanout (3, not 2): its leader knocks on node 0's
// leader, which refuses it with proof, naming the tree and the variable; the leader fails at
// once and hands the reason to its local; rank 0 names the ranks that never came.
int tree_leader_refused() {
    Checker check{"tree_leader_refused"};
    const int per_node = 2;
    const int nodes = 7;
    Job job = make_tree_job("tree_leader_refused", per_node * nodes, nodes, 2, milliseconds(4000));
    Children kids(static_cast<std::size_t>(job.world));
    std::vector<std::size_t> ranks;
    // Node 3 (ranks 6-7) takes fanout 3 and so joins node 0 instead of node 1. Node 0 is the root
    // and listens until the world is in, so the refusal does not depend on timing: a middle
    // leader stops listening once its own subtree is complete, and a stray leader arriving after
    // that would only find the port closed.
    for (int r = 0; r < job.world; ++r) {
        ranks.push_back(kids.spawn("rank " + std::to_string(r), [&job, r] {
            RendezvousConfig c = job.config(r);
            if (c.node_rank == 3) c.tree_fanout = 3;
            return run_rank(c, 1);
        }));
    }
    check.expect(kids.wait_all(milliseconds(10000)), "no process hangs");
    check.expect_error(kids, ranks[6], Errc::auth,
                       {"refused rank 6", "not a child of node 0", "SLURM_DDP_TREE_FANOUT"});
    check.expect_under(kids, ranks[6], 2.0);
    check.expect_error(
        kids, ranks[7], Errc::auth,
        {"the node leader, rank 6 (node3), could not join", "not a child of node 0"});
    check.expect_under(kids, ranks[7], 2.5);
    check.expect_error(kids, ranks[0], Errc::timeout, {"missing ranks 6-7"});
    for (const std::size_t i : ranks) check.expect_under(kids, i, 4.5);
    return check.failures;
}

// Node 1's leader (rank 2) leads node 3 in the tree, so it listens on its own node's port, which
// something else holds. Its error names that node, not rank 0, and its local (rank 3) learns the
// reason from it at once instead of "Connection refused" at its own timeout.
int tree_leader_port_busy() {
    Checker check{"tree_leader_port_busy"};
    Job job = make_tree_job("tree_leader_port_busy", 8, 4, 2, milliseconds(3000));
    const std::uint16_t busy = job.leader_ports[1];
    const int squatter = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(busy);
    const bool held = ::bind(squatter, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                      ::listen(squatter, 4) == 0;
    check.expect(held, "the test holds node 1's port");
    Children kids(static_cast<std::size_t>(job.world));
    const std::vector<std::size_t> ranks = spawn_tree_job(kids, job, 1, {});
    check.expect(kids.wait_all(milliseconds(10000)), "no process hangs");
    ::close(squatter);
    const std::string port = std::to_string(busy);
    check.expect_error(kids, ranks[2], Errc::io,
                       {"node node1 (leader of node 1 in the rendezvous tree, rank 2) cannot "
                        "listen on TCP port " +
                            port,
                        "already in use"});
    check.expect_under(kids, ranks[2], 2.0);
    check.expect_error(
        kids, ranks[3], Errc::io,
        {"the node leader, rank 2 (node1), could not join", "cannot listen on TCP port " + port});
    // Well before its own 3 s timeout, where it used to end.
    check.expect_under(kids, ranks[3], 2.5);
    return check.failures;
}

}  // namespace

std::vector<Scenario> tree_scenarios() {
    return {
        {"tree_60_on_15_nodes_k2",
         [] { return tree_healthy("tree_60_on_15_nodes_k2", 60, 15, 2); }},
        {"tree_40_flat_k3", [] { return tree_healthy("tree_40_flat_k3", 40, 40, 3); }},
        {"tree_middle_killed", tree_middle_killed},
        {"tree_collective_mismatch", tree_collective_mismatch},
        {"tree_middle_never_joins", tree_middle_never_joins},
        {"tree_leader_refused", tree_leader_refused},
        {"tree_leader_port_busy", tree_leader_port_busy},
    };
}

}  // namespace sddp::mp

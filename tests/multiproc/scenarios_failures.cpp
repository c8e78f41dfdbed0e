// SPDX-License-Identifier: Apache-2.0
// Ranks that never come, die, abort or disagree: every survivor must fail promptly with the
// right error code and a message that names the culprit, and nothing may hang.
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdio>

#include "harness.hpp"
#include "rendezvous/tcp_transport.hpp"
#include "scenarios.hpp"

namespace sddp::mp {
namespace {

using Hook = std::function<std::optional<Report>(Transport&, int)>;

std::vector<std::size_t> spawn_job(Children& kids, const Job& job, int rounds,
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

Hook die_in_round(int round) {
    return [round](Transport&, int now) -> std::optional<Report> {
        if (now == round) ::raise(SIGKILL);
        return std::nullopt;
    };
}

int rank_never_joins() {
    Checker check{"rank_never_joins"};
    Job job = make_job("rank_never_joins", 4, 2, milliseconds(3000));
    Children kids(8);
    std::vector<std::size_t> ranks;
    for (int r = 0; r < 3; ++r) {
        ranks.push_back(kids.spawn("rank " + std::to_string(r),
                                   [&job, r] { return run_rank(job.config(r), 1); }));
    }
    // Rank 3 dies before it ever connects.
    kids.spawn("rank 3", [] { return Report{0, 0, "exited before joining"}; });
    check.expect(kids.wait_all(milliseconds(8000)), "no process hangs");
    check.expect_error(
        kids, ranks[0], Errc::timeout,
        {"missing ranks 3", "node1 (node leader rank 2, 1 of 2 local ranks joined)"});
    for (const std::size_t i : ranks) {
        check.expect_error(kids, i, Errc::timeout, {"ranks 3"});
        check.expect_under(kids, i, 3.5);
    }
    return check.failures;
}

int rank_never_joins_flat() {
    Checker check{"rank_never_joins_flat"};
    Job job = make_job("rank_never_joins_flat", 6, 6, milliseconds(3000));
    Children kids(8);
    std::vector<std::size_t> ranks;
    for (int r : {0, 1, 2, 5}) {
        ranks.push_back(kids.spawn("rank " + std::to_string(r),
                                   [&job, r] { return run_rank(job.config(r), 1); }));
    }
    check.expect(kids.wait_all(milliseconds(8000)), "no process hangs");
    check.expect_error(kids, ranks[0], Errc::timeout, {"missing ranks 3-4", "2 of 6 ranks"});
    // Every rank that came must fail with rank 0's diagnosis, not merely end in time (a rank
    // that crashed would end in time too).
    for (const std::size_t i : ranks) {
        check.expect_error(kids, i, Errc::timeout, {"missing ranks 3-4"});
        check.expect_under(kids, i, 3.5);
    }
    return check.failures;
}

// A rank is SIGKILLed in round 1, after a complete round 0; a long timeout proves that the
// survivors notice the death itself, not a timer.
int rank_killed(const std::string& name, int victim, const std::vector<std::string>& mention) {
    Checker check{name};
    Job job = make_job(name, 8, 2, milliseconds(20000));
    Children kids(8);
    std::vector<std::size_t> ranks =
        spawn_job(kids, job, 3, [victim](int r) { return r == victim ? die_in_round(1) : Hook{}; });
    check.expect(kids.wait_all(milliseconds(10000)), "no process hangs");
    for (int r = 0; r < job.world; ++r) {
        if (r == victim) continue;
        std::vector<std::string> want = mention;
        for (std::string& s : want) {
            if (s == "$PORT") s = "rank 0 at 127.0.0.1:" + std::to_string(job.port);
        }
        check.expect_error(kids, ranks[static_cast<std::size_t>(r)], Errc::peer_lost, want);
        check.expect_under(kids, ranks[static_cast<std::size_t>(r)], 3.0);
    }
    return check.failures;
}

int abort_propagates() {
    Checker check{"abort_propagates"};
    Job job = make_job("abort_propagates", 8, 2, milliseconds(20000));
    Children kids(8);
    std::vector<std::size_t> ranks = spawn_job(kids, job, 3, [](int r) -> Hook {
        if (r != 6) return {};
        return [](Transport& t, int round) -> std::optional<Report> {
            if (round != 1) return std::nullopt;
            t.abort("custom reason xyz");
            // After an abort, every call fails with it.
            const Status s = t.barrier();
            return Report{s.ok() ? 99 : 0, 0, s.ok() ? "barrier after abort succeeded" : ""};
        };
    });
    check.expect(kids.wait_all(milliseconds(10000)), "no process hangs");
    for (int r = 0; r < job.world; ++r) {
        const std::size_t i = ranks[static_cast<std::size_t>(r)];
        if (r == 6) {
            check.expect_ok(kids, i);
            continue;
        }
        check.expect_error(kids, i, Errc::peer_lost,
                           {"rank 6 (node1) aborted", "custom reason xyz"});
        check.expect_under(kids, i, 3.0);
    }
    return check.failures;
}

// Node 1 was started with another step's secret: rank 0 refuses its leader. A refusal whose
// sender cannot prove the leader's secret is not trusted (a squatter could send one), so the
// leader keeps trying to its 6 s deadline and then reports it; its locals must learn why from
// the leader at once, not time out on their own saying only "could not reach".
int leader_refused() {
    Checker check{"leader_refused"};
    Job job = make_job("leader_refused", 8, 2, milliseconds(6000));
    Children kids(8);
    std::vector<std::size_t> node1;
    for (int r = 0; r < job.world; ++r) {
        const std::size_t i = kids.spawn("rank " + std::to_string(r), [&job, r] {
            RendezvousConfig c = job.config(r);
            if (r >= 4) c.secret = std::string(c.secret.size(), 'x');
            return run_rank(c, 1);
        });
        if (r >= 4) node1.push_back(i);
    }
    check.expect(kids.wait_all(milliseconds(15000)), "no process hangs");
    check.expect_error(kids, node1[0], Errc::auth, {"refused rank 4"});
    check.expect_under(kids, node1[0], 6.5);
    for (std::size_t k = 1; k < node1.size(); ++k) {
        check.expect_error(kids, node1[k], Errc::auth,
                           {"the node leader, rank 4 (node1), could not join", "refused rank 4"});
        check.expect_under(kids, node1[k], 7.0);
    }
    return check.failures;
}

int collective_mismatch() {
    Checker check{"collective_mismatch"};
    Job job = make_job("collective_mismatch", 4, 4, milliseconds(20000));
    Children kids(8);
    std::vector<std::size_t> ranks = spawn_job(kids, job, 1, [](int r) -> Hook {
        if (r != 2) return {};
        return [](Transport& t, int) -> std::optional<Report> {
            const auto start = Clock::now();
            const Status s = t.barrier();  // everyone else starts with a broadcast
            return s.ok() ? Report{99, 0, "mismatched barrier succeeded"}
                          : report_error(s.error(), start);
        };
    });
    check.expect(kids.wait_all(milliseconds(10000)), "no process hangs");
    for (const std::size_t i : ranks) {
        check.expect_error(kids, i, Errc::protocol, {"collective mismatch", "barrier #1"});
        check.expect_under(kids, i, 3.0);
    }
    return check.failures;
}

int busy_port() {
    Checker check{"busy_port"};
    Job job = make_job("busy_port", 2, 2, milliseconds(3000));
    const int squatter = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(job.port);
    ::bind(squatter, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(squatter, 4);
    Children kids(2);
    const std::size_t root = kids.spawn("rank 0", [&job] { return run_rank(job.config(0), 1); });
    check.expect(kids.wait_all(milliseconds(6000)), "no process hangs");
    ::close(squatter);
    const std::string port = std::to_string(job.port);
    check.expect_error(kids, root, Errc::io,
                       {"port " + port, "already in use", "--ddp=port=N", "MASTER_PORT"});
    check.expect_under(kids, root, 0.5);
    return check.failures;
}

int root_unreachable() {
    Checker check{"root_unreachable"};
    Job job = make_job("root_unreachable", 2, 2, milliseconds(2000));
    Children kids(2);
    const std::size_t r1 = kids.spawn("rank 1", [&job] { return run_rank(job.config(1), 1); });
    check.expect(kids.wait_all(milliseconds(6000)), "no process hangs");
    check.expect_error(kids, r1, Errc::timeout,
                       {"rank 0 at 127.0.0.1:" + std::to_string(job.port), "Connection refused"});
    check.expect_under(kids, r1, 2.5);
    return check.failures;
}

}  // namespace

std::vector<Scenario> failure_scenarios() {
    return {
        {"rank_never_joins", rank_never_joins},
        {"rank_never_joins_flat", rank_never_joins_flat},
        {"rank_killed_mid_exchange",
         [] { return rank_killed("rank_killed_mid_exchange", 5, {"lost connection to rank 5"}); }},
        {"leader_killed",
         [] { return rank_killed("leader_killed", 4, {"lost connection to rank 4"}); }},
        {"root_killed",
         [] {
             return rank_killed("root_killed", 0, {"lost connection to", "$PORT"});
         }},
        {"abort_propagates", abort_propagates},
        {"collective_mismatch", collective_mismatch},
        {"leader_refused", leader_refused},
        {"busy_port", busy_port},
        {"root_unreachable", root_unreachable},
    };
}

}  // namespace sddp::mp

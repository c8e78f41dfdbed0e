// SPDX-License-Identifier: Apache-2.0
// `slurm-ddp run --restarts`: its arguments, the first failure read from srun's stderr, the
// nodes of each run, the summary line, and when srun can take a signal.
#include <gtest/gtest.h>

#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "run/run_args.hpp"
#include "run/run_failure.hpp"
#include "run/run_plan.hpp"
#include "run/run_signals.hpp"

namespace sddp::run {
namespace {

using Args = std::vector<std::string>;

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// ---- arguments ----

TEST(RunArgs, SplitsOwnOptionsSrunOptionsAndProgram) {
    auto r = parse_run_args(
        {"--restarts=2", "-N2", "--ntasks-per-node=1", "-l", "--", "prog", "-N5", "--restarts=9"});
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->restarts, 2u);
    EXPECT_EQ(r->nodes.min, 2u);
    EXPECT_EQ(r->nodes.max, 2u);
    EXPECT_EQ(r->srun_options, (Args{"--ntasks-per-node=1", "-l"}));
    EXPECT_EQ(r->program, (Args{"prog", "-N5", "--restarts=9"}));  // the program's own
    EXPECT_FALSE(r->has_ddp);
    EXPECT_FALSE(r->has_kill_on_bad_exit);
}

TEST(RunArgs, ReadsEverySpellingOfNodesExcludeAndRestarts) {
    for (const Args& a : {Args{"-N", "3", "--restarts", "1", "--", "p"},
                          Args{"--nodes=3", "--restarts=1", "--", "p"},
                          Args{"--nodes", "3", "--restarts=1", "--", "p"}}) {
        auto r = parse_run_args(a);
        ASSERT_TRUE(r.ok()) << r.error().message;
        EXPECT_EQ(r->nodes.min, 3u);
        EXPECT_EQ(r->restarts, 1u);
        EXPECT_TRUE(r->srun_options.empty());
    }
    auto range = parse_run_args({"-N2-4", "-xn3", "-x", "n[5-6]", "--exclude=n9", "--", "p"});
    ASSERT_TRUE(range.ok()) << range.error().message;
    EXPECT_EQ(range->nodes.min, 2u);
    EXPECT_EQ(range->nodes.max, 4u);
    EXPECT_EQ(range->restarts, 0u);  // the default: run once
    EXPECT_EQ(range->excluded, (Args{"n3", "n5", "n6", "n9"}));
    EXPECT_TRUE(range->srun_options.empty());
}

TEST(RunArgs, NotesDdpAndKillOnBadExitAndPassesThemOn) {
    auto r = parse_run_args({"-N1", "--ddp=verbose", "-K0", "--", "p"});
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_TRUE(r->has_ddp);
    EXPECT_TRUE(r->has_kill_on_bad_exit);
    EXPECT_EQ(r->srun_options, (Args{"--ddp=verbose", "-K0"}));
    EXPECT_FALSE(r->has_ntasks);
    auto k = parse_run_args({"-N1", "--kill-on-bad-exit=0", "--ntasks-per-node=2", "--", "p"});
    ASSERT_TRUE(k.ok());
    EXPECT_TRUE(k->has_kill_on_bad_exit);
    EXPECT_FALSE(k->has_ntasks);  // --ntasks-per-node is not --ntasks
    for (const Args& a : {Args{"-N1", "-n4", "--", "p"}, Args{"-N1", "-n", "4", "--", "p"},
                          Args{"-N1", "--ntasks=4", "--", "p"}}) {
        EXPECT_TRUE(parse_run_args(a)->has_ntasks) << a[1];
    }
}

TEST(RunArgs, NotesWhereTheUserSendsStderr) {
    EXPECT_FALSE(parse_run_args({"-N1", "-l", "-u", "--", "p", "-e", "x"})->has_own_stderr);
    for (const Args& a :
         {Args{"-N1", "-e", "err.%t", "--", "p"}, Args{"-N1", "-eerr", "--", "p"},
          Args{"-N1", "--error=err", "--", "p"}, Args{"-N1", "--error", "err", "--", "p"},
          Args{"-N1", "-o", "out", "--", "p"}, Args{"-N1", "--output=out", "--", "p"},
          Args{"-N1", "--pty", "--", "p"}}) {
        auto r = parse_run_args(a);
        ASSERT_TRUE(r.ok()) << r.error().message;
        EXPECT_TRUE(r->has_own_stderr) << a[1];
        EXPECT_EQ(r->srun_options.front(), a[1]) << "passed on unchanged";
    }
    // --input moves stdin only; --export is not --error.
    EXPECT_FALSE(parse_run_args({"-N1", "--input=in", "--export=ALL", "--", "p"})->has_own_stderr);
}

TEST(RunArgs, RestartsOutsideTheRangeNameTheValueAndTheFix) {
    for (const char* bad : {"101", "-1", "x", "", "1.5", "99999999999"}) {
        auto r = parse_run_args({std::string("--restarts=") + bad, "-N1", "--", "p"});
        ASSERT_FALSE(r.ok()) << bad;
        EXPECT_TRUE(has(r.error().message, std::string("--restarts='") + bad + "'"))
            << r.error().message;
        EXPECT_TRUE(has(r.error().message, "0 to 100")) << r.error().message;
    }
    EXPECT_TRUE(parse_run_args({"--restarts=100", "-N1", "--", "p"}).ok());
    EXPECT_TRUE(parse_run_args({"--restarts=0", "-N1", "--", "p"}).ok());
    auto missing = parse_run_args({"-N1", "--restarts", "--", "p"});
    ASSERT_FALSE(missing.ok());
    EXPECT_TRUE(has(missing.error().message, "--restarts needs a value"));
}

TEST(RunArgs, RefusesWhatWouldKeepAFailedNodeIn) {
    for (const Args& a :
         {Args{"-N1", "-w", "n1", "--", "p"}, Args{"-N1", "-wn1", "--", "p"},
          Args{"-N1", "--nodelist=n1", "--", "p"}, Args{"-N1", "--nodefile=f", "--", "p"},
          Args{"-N1", "-r1", "--", "p"}, Args{"-N1", "--relative", "1", "--", "p"}}) {
        auto r = parse_run_args(a);
        ASSERT_FALSE(r.ok()) << a[1];
        EXPECT_TRUE(has(r.error().message, "fixes the nodes of the step")) << r.error().message;
        EXPECT_TRUE(has(r.error().message, a[1])) << r.error().message;
    }
    auto file = parse_run_args({"-N1", "-x", "./bad_nodes", "--", "p"});
    ASSERT_FALSE(file.ok());
    EXPECT_TRUE(has(file.error().message, "-x/--exclude='./bad_nodes' names a file"));
    auto list = parse_run_args({"-N1", "-x", "n[1-", "--", "p"});
    ASSERT_FALSE(list.ok());
    EXPECT_TRUE(has(list.error().message, "-x/--exclude: ")) << list.error().message;
}

TEST(RunArgs, MissingProgramOrNodeCountIsAClearError) {
    auto no_sep = parse_run_args({"-N1", "prog"});
    ASSERT_FALSE(no_sep.ok());
    EXPECT_TRUE(has(no_sep.error().message, "after '--'"));
    EXPECT_FALSE(parse_run_args({"-N1", "--"}).ok());
    auto no_nodes = parse_run_args({"--restarts=1", "--", "p"});
    ASSERT_FALSE(no_nodes.ok());
    EXPECT_TRUE(has(no_nodes.error().message, "-N/--nodes")) << no_nodes.error().message;
    for (const char* bad : {"0", "3-2", "a", "2-", "-2", ""}) {
        auto r = parse_node_range(bad);
        ASSERT_FALSE(r.ok()) << bad;
        EXPECT_TRUE(has(r.error().message, std::string("-N/--nodes='") + bad + "'"));
    }
    EXPECT_TRUE(parse_run_args({"--help"})->help);
}

// ---- srun's stderr ----

TEST(RunFailure, ReadsSrunsTaskExitLines) {
    auto f = parse_srun_failure_line("srun: error: n2: task 3: Exited with exit code 7");
    ASSERT_TRUE(f);
    EXPECT_EQ(f->rank, 3u);
    EXPECT_EQ(f->node, "n2");
    EXPECT_EQ(f->kind, FailureKind::exit_status);
    EXPECT_EQ(f->value, 7);
    EXPECT_FALSE(f->from_plugin);
    EXPECT_EQ(describe_reason(*f), "exit status 7");
    EXPECT_EQ(failure_exit_status(*f), 7);
}

TEST(RunFailure, ReadsSrunsSignalLinesAsStrsignalWritesThem) {
    const struct {
        const char* line;
        std::uint32_t rank;
        const char* node;
        int sig;
    } cases[] = {
        {"srun: error: n2: task 3: Segmentation fault (core dumped)", 3, "n2", SIGSEGV},
        {"srun: error: n2: task 3: Segmentation fault", 3, "n2", SIGSEGV},
        {"srun: error: n1: task 2: Killed", 2, "n1", SIGKILL},
        {"srun: error: n1: tasks 0-2: Terminated", 0, "n1", SIGTERM},
        {"srun: error: gpu-a17.cluster: tasks 4,6-7: Aborted (core dumped)", 4, "gpu-a17.cluster",
         SIGABRT},
    };
    for (const auto& c : cases) {
        auto f = parse_srun_failure_line(c.line);
        ASSERT_TRUE(f) << c.line;
        EXPECT_EQ(f->rank, c.rank) << c.line;
        EXPECT_EQ(f->node, c.node) << c.line;
        EXPECT_EQ(f->kind, FailureKind::signal) << c.line;
        EXPECT_EQ(f->value, c.sig) << c.line;
        EXPECT_EQ(failure_exit_status(*f), 128 + c.sig);
    }
    auto segv = parse_srun_failure_line("srun: error: n2: task 3: Segmentation fault");
    EXPECT_EQ(describe_reason(*segv), "signal 11 (SIGSEGV)");
}

TEST(RunFailure, FindsSrunsLineAfterATasksOutputWithoutNewline) {
    auto f = parse_srun_failure_line("epoch 3 50%srun: error: n2: task 3: Exited with exit code 7");
    ASSERT_TRUE(f);
    EXPECT_EQ(f->node, "n2");
    EXPECT_EQ(f->rank, 3u);
    EXPECT_EQ(f->value, 7);
}

TEST(RunFailure, NodeFailureAndUnknownReasons) {
    auto f = parse_srun_failure_line("srun: error: Node failure on n2");
    ASSERT_TRUE(f);
    EXPECT_EQ(f->kind, FailureKind::node_failure);
    EXPECT_EQ(f->node, "n2");
    EXPECT_FALSE(f->rank);
    EXPECT_FALSE(failure_exit_status(*f));
    auto other = parse_srun_failure_line("srun: error: n2: task 1: Out Of Memory");
    ASSERT_TRUE(other);
    EXPECT_EQ(other->kind, FailureKind::other);
    EXPECT_EQ(describe_reason(*other), "Out Of Memory");
    EXPECT_FALSE(failure_exit_status(*other));
}

TEST(RunFailure, IgnoresOtherLines) {
    for (const char* line : {
             "srun: error: Unable to create step for job 12: Requested node configuration is "
             "not available",
             "srun: Force Terminated StepId=4.0",
             "slurmstepd-n1: error: *** STEP 5.0 ON n1 CANCELLED AT 2026-11-25T21:11:43 ***",
             "n2: task 3: Exited with exit code 7",  // a program's own text
             "3: srun: error n2: task 3: Exited with exit code 7",
             "srun: error: n 2: task 3: Exited with exit code 7",
             "srun: error: n2: task x: Exited with exit code 7",
             "srun: error: n2: task 3: Exited with exit code seven",
             "srun: error: Node failure on n2 and more",
             "",
         }) {
        EXPECT_FALSE(parse_srun_failure_line(line)) << line;
        EXPECT_FALSE(parse_plugin_failure_line(line)) << line;
    }
}

TEST(RunFailure, ReadsThePluginsFailFastReport) {
    auto f = parse_plugin_failure_line(
        "srun: error: slurm-ddp: rank 3 on n2 ended with exit status 7; ending the other ranks "
        "of step 9.0 (--ddp=keep-going keeps them running)");
    ASSERT_TRUE(f);
    EXPECT_TRUE(f->from_plugin);
    EXPECT_EQ(f->rank, 3u);
    EXPECT_EQ(f->node, "n2");
    EXPECT_EQ(f->kind, FailureKind::exit_status);
    EXPECT_EQ(f->value, 7);
    auto s = parse_plugin_failure_line(
        "slurm-ddp: rank 12 on node-7 was killed by signal 11 (SIGSEGV); ending the other ranks "
        "of step 9.0 (--ddp=keep-going keeps them running)");
    ASSERT_TRUE(s);
    EXPECT_EQ(s->rank, 12u);
    EXPECT_EQ(s->node, "node-7");
    EXPECT_EQ(s->kind, FailureKind::signal);
    EXPECT_EQ(s->value, 11);
    EXPECT_EQ(describe_reason(*s), "signal 11 (SIGSEGV)");
    EXPECT_FALSE(parse_plugin_failure_line("rank 3 on n2 ended with exit status 7"));
    EXPECT_FALSE(
        parse_plugin_failure_line("frank 3 on n2 ended with exit status 7; ending the "
                                  "other ranks"));
}

TEST(RunFailure, WatchPrefersThePluginAndKeepsTheFirstOfEach) {
    FirstFailureWatch w;
    EXPECT_FALSE(w.first());
    w.feed_line("hello from rank 0");
    w.feed_line("srun: error: n1: tasks 0-2: Killed");
    w.feed_line("srun: error: n2: task 3: Exited with exit code 7");
    ASSERT_TRUE(w.first());
    EXPECT_EQ(w.first()->node, "n1");  // srun's first, while the plugin said nothing
    w.feed_line(
        "slurm-ddp: rank 3 on n2 ended with exit status 7; ending the other ranks of "
        "step 9.0");
    w.feed_line(
        "slurm-ddp: rank 1 on n1 ended with exit status 1; ending the other ranks of "
        "step 9.0");
    ASSERT_TRUE(w.first());
    EXPECT_TRUE(w.first()->from_plugin);
    EXPECT_EQ(w.first()->rank, 3u);
    EXPECT_EQ(w.first()->node, "n2");
}

TEST(RunFailure, ReadsSrunsTaskLists) {
    auto f = parse_srun_failure_line("srun: error: n1: tasks 0-2,5,7-8: Killed");
    ASSERT_TRUE(f);
    EXPECT_EQ(f->rank, 0u);
    EXPECT_EQ(f->tasks,
              (std::vector<std::pair<std::uint32_t, std::uint32_t>>{{0, 2}, {5, 5}, {7, 8}}));
    for (const char* bad :
         {"srun: error: n1: tasks 0-,5: Killed", "srun: error: n1: tasks 2-1: Killed",
          "srun: error: n1: tasks 0,: Killed", "srun: error: n1: task : Killed"}) {
        EXPECT_FALSE(parse_srun_failure_line(bad)) << bad;
    }
}

TEST(RunFailure, SrunConfirmsOnlyTheSameRankNodeAndEnd) {
    const auto srun =
        *parse_srun_failure_line("srun: error: n2: tasks 2-3: Exited with exit code 5");
    const auto report = [](const char* line) {
        return *parse_plugin_failure_line(std::string(line) +
                                          "; ending the other ranks of step 42.0");
    };
    EXPECT_TRUE(srun_confirms(srun, report("rank 3 on n2 ended with exit status 5")));
    EXPECT_TRUE(srun_confirms(srun, report("rank 2 on n2 ended with exit status 5")));
    EXPECT_FALSE(srun_confirms(srun, report("rank 4 on n2 ended with exit status 5")));
    EXPECT_FALSE(srun_confirms(srun, report("rank 3 on n1 ended with exit status 5")));
    EXPECT_FALSE(srun_confirms(srun, report("rank 3 on n2 ended with exit status 6")));
    EXPECT_FALSE(srun_confirms(srun, report("rank 3 on n2 was killed by signal 5 (SIGTRAP)")));
    const auto segv = *parse_srun_failure_line("srun: error: n1: task 0: Segmentation fault");
    EXPECT_TRUE(srun_confirms(segv, report("rank 0 on n1 was killed by signal 11 (SIGSEGV)")));
    const auto node = *parse_srun_failure_line("srun: error: Node failure on n1");
    EXPECT_FALSE(srun_confirms(node, report("rank 0 on n1 ended with exit status 1")));
}

TEST(RunFailure, WatchReadsEachStreamForItsOwnReports) {
    // The tasks' stream: a task's look-alike of srun's line is not srun's.
    FirstFailureWatch w;
    w.feed_task_line("srun: error: n1: task 0: Exited with exit code 9");
    EXPECT_FALSE(w.first());
    // srun's stream: its own line counts.
    w.feed_srun_line("srun: error: n2: task 0: Exited with exit code 7");
    ASSERT_TRUE(w.first());
    EXPECT_EQ(w.first()->node, "n2");
    EXPECT_EQ(w.first()->value, 7);
    EXPECT_FALSE(w.first()->from_plugin);
}

TEST(RunFailure, WatchPrefersAReportOnlyOnceSrunConfirmsIt) {
    FirstFailureWatch w;
    // A task's look-alike report first, then the real one, then srun's lines in its own order.
    w.feed_task_line(
        "slurm-ddp: rank 0 on n1 ended with exit status 9; ending the other ranks of step 9.0");
    w.feed_task_line(
        "3: slurmstepd-n2: error: slurm-ddp: rank 3 on n2 ended with exit status 7; ending the "
        "other ranks of step 9.0");
    EXPECT_FALSE(w.first()) << "no report counts before srun confirms it";
    w.feed_srun_line("srun: error: n1: tasks 0-2: Killed");
    ASSERT_TRUE(w.first());
    EXPECT_FALSE(w.first()->from_plugin);
    EXPECT_EQ(w.first()->node, "n1");
    w.feed_srun_line("srun: error: n2: task 3: Exited with exit code 7");
    ASSERT_TRUE(w.first());
    EXPECT_TRUE(w.first()->from_plugin);
    EXPECT_EQ(w.first()->rank, 3u);
    EXPECT_EQ(w.first()->node, "n2");
}

TEST(RunFailure, WatchKeepsABoundedNumberOfUnconfirmedReports) {
    FirstFailureWatch w;
    for (std::uint32_t i = 0; i < FirstFailureWatch::kMaxUnconfirmed + 10; ++i) {
        w.feed_task_line("slurm-ddp: rank " + std::to_string(i) +
                         " on n9 ended with exit status 1; ending the other ranks of step 9.0");
    }
    w.feed_task_line(
        "slurm-ddp: rank 1 on n2 ended with exit status 7; ending the other ranks of step 9.0");
    w.feed_srun_line("srun: error: n2: task 1: Exited with exit code 7");
    ASSERT_TRUE(w.first());
    // The real report came after the list was full: srun's own line stands in, with the same
    // answer.
    EXPECT_FALSE(w.first()->from_plugin);
    EXPECT_EQ(w.first()->rank, 1u);
    EXPECT_EQ(w.first()->node, "n2");
}

TEST(RunFailure, LineSplitterJoinsChunksAndDropsOverlongLines) {
    std::vector<std::string> got;
    LineSplitter s;
    auto on = [&got](std::string_view l) { got.emplace_back(l); };
    s.feed("srun: error: n2: ta", on);
    s.feed("sk 3: Exited with exit code 7\nsecond", on);
    s.feed(std::string(LineSplitter::kMaxLine + 10, 'x'), on);
    s.feed("\nthird", on);
    s.finish(on);
    EXPECT_EQ(got, (std::vector<std::string>{"srun: error: n2: task 3: Exited with exit code 7",
                                             "third"}));
}

// ---- nodes, restart count, summary ----

RunRequest request(const Args& a) {
    auto r = parse_run_args(a);
    EXPECT_TRUE(r.ok()) << r.error().message;
    return *r;
}

TEST(RunPlan, TakesTheFirstUsableNodesAndLeavesFailedOnesOut) {
    const RunRequest req = request({"-N2", "--", "p"});
    NodePool pool{{"n1", "n2", "n3"}, "n[1-3]", {}, {}};
    EXPECT_EQ(*choose_run_nodes(pool, req), (Args{"n1", "n2"}));
    pool.failed = {"n1"};
    EXPECT_EQ(*choose_run_nodes(pool, req), (Args{"n2", "n3"}));
    pool.failed = {"n1", "n3"};
    auto short_of_nodes = choose_run_nodes(pool, req);
    ASSERT_FALSE(short_of_nodes.ok());
    const std::string& m = short_of_nodes.error().message;
    EXPECT_TRUE(has(m, "SLURM_JOB_NODELIST=n[1-3] leaves 1 usable node")) << m;
    EXPECT_TRUE(has(m, "n[1,3] (failed)")) << m;
    EXPECT_TRUE(has(m, "needs 2 (-N2)")) << m;
}

TEST(RunPlan, ShrinksWithinARangeAndHonoursExclude) {
    const RunRequest req = request({"-N1-3", "-x", "n4", "--", "p"});
    NodePool pool{{"n1", "n2", "n3", "n4"}, "n[1-4]", req.excluded, {}};
    EXPECT_EQ(*choose_run_nodes(pool, req), (Args{"n1", "n2", "n3"}));
    pool.failed = {"n2"};
    EXPECT_EQ(*choose_run_nodes(pool, req), (Args{"n1", "n3"}));
    pool.failed = {"n2", "n1", "n3"};
    auto none = choose_run_nodes(pool, req);
    ASSERT_FALSE(none.ok());
    EXPECT_TRUE(has(none.error().message, "leaves 0 usable nodes")) << none.error().message;
    EXPECT_TRUE(has(none.error().message, "and n4 (-x)")) << none.error().message;
}

TEST(RunPlan, FirstRestartCountIsTheJobsRequeueCount) {
    EXPECT_EQ(*first_restart_count(std::nullopt), 0u);
    EXPECT_EQ(*first_restart_count(std::string("")), 0u);
    EXPECT_EQ(*first_restart_count(std::string("2")), 2u);
    auto bad = first_restart_count(std::string("x"));
    ASSERT_FALSE(bad.ok());
    EXPECT_TRUE(has(bad.error().message, "SLURM_RESTART_COUNT='x'"));
}

TEST(RunPlan, SummaryLineNamesRunNodesRankAndReason) {
    RunRecord r;
    r.number = 1;
    r.max_runs = 2;
    r.nodes = {"n1", "n2"};
    r.restart_count = 0;
    r.srun_status = 143;
    r.failure = parse_srun_failure_line("srun: error: n2: task 3: Exited with exit code 7");
    EXPECT_EQ(summary_line(r, "restarting without n2 on n[1,3]"),
              "slurm-ddp run: run 1 of 2 on n[1-2] (SLURM_DDP_RESTARTS=0): failed, rank 3 on n2: "
              "exit status 7; restarting without n2 on n[1,3]");
    EXPECT_EQ(run_exit_status(r), 7);  // the rank's, not srun's 143 for the ranks it ended

    r.number = 2;
    r.nodes = {"n1", "n3"};
    r.restart_count = 1;
    r.srun_status = 0;
    r.failure.reset();
    EXPECT_EQ(summary_line(r, ""),
              "slurm-ddp run: run 2 of 2 on n[1,3] (SLURM_DDP_RESTARTS=1): succeeded");
    EXPECT_EQ(run_exit_status(r), 0);

    r.srun_status = 139;
    r.failure = parse_srun_failure_line("srun: error: n3: task 1: Segmentation fault");
    EXPECT_TRUE(has(summary_line(r, ""), "failed, rank 1 on n3: signal 11 (SIGSEGV)"));
    EXPECT_EQ(run_exit_status(r), 139);

    r.failure = parse_srun_failure_line("srun: error: Node failure on n3");
    r.srun_status = 1;
    EXPECT_TRUE(has(summary_line(r, ""), "failed, node n3: node failure"));
    EXPECT_EQ(run_exit_status(r), 1);

    r.failure.reset();
    EXPECT_TRUE(has(summary_line(r, ""), "failed with srun exit status 1, no failed rank"));
}

// ---- signals ----

std::string proc_status(const char* state, const char* blk, const char* ign, const char* cgt) {
    return std::string("Name:\tsrun\nState:\t") + state + "\nSigQ:\t0/1\nSigPnd:\t0\nShdPnd:\t0\n" +
           "SigBlk:\t" + blk + "\nSigIgn:\t" + ign + "\nSigCgt:\t" + cgt + "\n";
}

TEST(RunSignals, SrunTakesASignalOnceItBlocksCatchesOrIgnoresIt) {
    constexpr const char* kNone = "0000000000000000";
    constexpr const char* kUsr1 = "0000000000000200";  // bit 9: SIGUSR1 (10)
    // Just after exec: SIGUSR1's default action would end srun.
    EXPECT_FALSE(status_takes_signal(
        proc_status("S (sleeping)", kNone, "0000000000000004", "0000000000010002"), SIGUSR1));
    EXPECT_TRUE(status_takes_signal(proc_status("S (sleeping)", kUsr1, kNone, kNone), SIGUSR1));
    EXPECT_TRUE(status_takes_signal(proc_status("R (running)", kNone, kUsr1, kNone), SIGUSR1));
    EXPECT_TRUE(status_takes_signal(proc_status("S (sleeping)", kNone, kNone, kUsr1), SIGUSR1));
    EXPECT_FALSE(status_takes_signal(proc_status("S (sleeping)", kUsr1, kNone, kNone), SIGUSR2));
    EXPECT_TRUE(status_takes_signal(proc_status("S (sleeping)", "0000000000000a00", kNone, kNone),
                                    SIGUSR2));
    // Ended: a signal sent now would be lost with it.
    EXPECT_FALSE(status_takes_signal(proc_status("Z (zombie)", kUsr1, kNone, kUsr1), SIGUSR1));
    EXPECT_FALSE(status_takes_signal("", SIGUSR1));
    EXPECT_FALSE(status_takes_signal(proc_status("S (sleeping)", "zz", kNone, kNone), SIGUSR1));
}

TEST(RunSignals, ReadsThisProcesssOwnStatus) {
    // gtest's process catches neither signal by default; blocking one shows at once.
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    sigset_t old;
    ASSERT_EQ(::sigprocmask(SIG_BLOCK, &set, &old), 0);
    EXPECT_TRUE(process_takes_signal(::getpid(), SIGUSR2));
    ASSERT_EQ(::sigprocmask(SIG_SETMASK, &old, nullptr), 0);
    EXPECT_FALSE(process_takes_signal(::getpid(), SIGUSR2));
    EXPECT_FALSE(process_takes_signal(-1, SIGUSR2));
}

}  // namespace
}  // namespace sddp::run

// SPDX-License-Identifier: Apache-2.0
// `slurm-ddp stacks`: the tools' output parsed into comparable frames, the step's processes
// picked out of /proc facts, the tool chosen, the records and the grouped report.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "stacks_frames.hpp"
#include "stacks_report.hpp"
#include "stacks_slurm.hpp"
#include "stacks_targets.hpp"

namespace sddp::stacks {
namespace {

using Lines = std::vector<std::string>;

// Captured from py-spy 0.4.3, gdb 13 and eu-stack 0.188 on Debian 12.
constexpr const char* kPyspy =
    "Process 2046: /venv/bin/python /tmp/stk_t.py\n"
    "Python v3.12.1 (/root/.pyenv/versions/3.12.1/bin/python3.12)\n"
    "\n"
    "Thread 2046 (idle): \"MainThread\"\n"
    "    stuck_here (stk_t.py:3)\n"
    "    outer (stk_t.py:5)\n"
    "    <module> (stk_t.py:6)\n"
    "Thread 0x7F1A2B3C (active+gil): \"pt_elastic\"\n"
    "    run (threading.py:10)\n";

constexpr const char* kGdb =
    "[New LWP 2202]\n"
    "[Thread debugging using libthread_db enabled]\n"
    "0x00007f60c3ee7545 in __GI___clock_nanosleep (clock_id=clock_id@entry=0) at "
    "../sysdeps/unix/sysv/linux/clock_nanosleep.c:48\n"
    "48\t../sysdeps/unix/sysv/linux/clock_nanosleep.c: No such file or directory.\n"
    "\n"
    "Thread 2 (Thread 0x7f60c3e146c0 (LWP 2202) \"stk_n\"):\n"
    "#0  0x00007f60c3eebdf2 in __libc_pause () at ../sysdeps/unix/sysv/linux/pause.c:29\n"
    "#1  0x0000564d33bf616a in side (a=0x0) at /tmp/stk_n.c:3\n"
    "#2  0x00007f60c3f218ec in clone3 () from /lib/x86_64-linux-gnu/libc.so.6\n"
    "\n"
    "Thread 1 (Thread 0x7f60c3e15740 (LWP 2201) \"stk_n\"):\n"
    "#0  0x00007f60c3ee7545 in __GI___clock_nanosleep (clock_id=clock_id@entry=0, "
    "req=req@entry=0x7ffd4725d7f0) at ../sysdeps/unix/sysv/linux/clock_nanosleep.c:48\n"
    "#1  0x0000564d33bf617a in native_wait_here () at /tmp/stk_n.c:4\n"
    "#2  std::vector<int, std::allocator<int> >::size (this=0x1) at vector.h:9\n"
    "#3  0x0000000000000000 in ?? ()\n"
    "[Inferior 1 (process 2201) detached]\n";

constexpr const char* kEuStack =
    "PID 3802 - process\n"
    "TID 3802:\n"
    "#0  0x00007fe049357545 clock_nanosleep@GLIBC_2.2.5\n"
    "#1  0x000055fa3764917a native_wait_here\n"
    "#2  0x000055fa37649091\n"
    "TID 3804:\n"
    "#0  0x00007fe04935bdf2 pause - /lib/x86_64-linux-gnu/libc.so.6\n"
    "    ../sysdeps/unix/sysv/linux/pause.c:29:10\n";

TEST(StacksFrames, PyspyKeepsThreadNamesAndFramesNotIdsOrStates) {
    EXPECT_EQ(
        parse_pyspy_dump(kPyspy),
        (Lines{"thread \"MainThread\"", "    stuck_here (stk_t.py:3)", "    outer (stk_t.py:5)",
               "    <module> (stk_t.py:6)", "thread \"pt_elastic\"", "    run (threading.py:10)"}));
}

TEST(StacksFrames, GdbDropsAddressesAndArgumentsAndPutsThreadOneFirst) {
    EXPECT_EQ(parse_gdb_backtrace(kGdb),
              (Lines{"thread \"stk_n\"", "    __GI___clock_nanosleep (clock_nanosleep.c:48)",
                     "    native_wait_here (stk_n.c:4)",
                     "    std::vector<int, std::allocator<int> >::size (vector.h:9)", "    ??",
                     "thread \"stk_n\"", "    __libc_pause (pause.c:29)", "    side (stk_n.c:3)",
                     "    clone3 (libc.so.6)"}));
}

TEST(StacksFrames, EuStackKeepsFunctionNames) {
    EXPECT_EQ(parse_eu_stack(kEuStack),
              (Lines{"thread", "    clock_nanosleep@GLIBC_2.2.5", "    native_wait_here", "    ??",
                     "thread", "    pause"}));
}

TEST(StacksFrames, TwoProcessesInTheSamePlaceGiveTheSameFrames) {
    std::string other = kGdb;
    for (auto [from, to] : {std::pair<std::string, std::string>{"0x00007f60", "0x00007faa"},
                            {"LWP 2202", "LWP 9999"},
                            {"req=req@entry=0x7ffd4725d7f0", "req=req@entry=0x7ffe00000000"}}) {
        for (auto at = other.find(from); at != std::string::npos; at = other.find(from, at)) {
            other.replace(at, from.size(), to);
        }
    }
    EXPECT_EQ(parse_gdb_backtrace(kGdb), parse_gdb_backtrace(other));
    EXPECT_EQ(parse_tool_output("eu-stack", kEuStack), parse_eu_stack(kEuStack));
    EXPECT_TRUE(parse_tool_output("pstack", kEuStack).empty());
}

TEST(StacksFrames, RefusedPtraceNamesTheScopeAndTheFix) {
    const auto m = describe_tool_failure(
        "gdb", 1, "ptrace: Operation not permitted.\nCould not attach to process.", "1", 20);
    EXPECT_NE(m.find("cannot attach with gdb"), std::string::npos) << m;
    EXPECT_NE(m.find("ptrace_scope is 1"), std::string::npos) << m;
    EXPECT_NE(m.find("job's user"), std::string::npos) << m;
    const auto eu = describe_tool_failure(
        "eu-stack", 1, "eu-stack: dwfl_linux_proc_report pid 1: Permission denied", "", 20);
    EXPECT_NE(eu.find("cannot attach with eu-stack"), std::string::npos) << eu;
    EXPECT_EQ(eu.find("ptrace_scope is"), std::string::npos) << eu;
}

TEST(StacksFrames, TimeoutAndOtherFailuresSayWhat) {
    EXPECT_NE(describe_tool_failure("py-spy", -1, "", "0", 20).find("did not finish within 20 s"),
              std::string::npos);
    const auto m =
        describe_tool_failure("py-spy", 1, "\nError: Failed to find python version\n", "0", 20);
    EXPECT_NE(m.find("py-spy failed (exit status 1): Error: Failed to find python version"),
              std::string::npos)
        << m;
}

ProcessFacts proc(int pid, int ppid, const std::string& comm, const std::string& rank,
                  const std::string& procid, const std::string& node = "n1",
                  const std::string& step = "0") {
    ProcessFacts p;
    p.pid = pid;
    p.ppid = ppid;
    p.comm = comm;
    p.env = {{"SLURM_JOB_ID", "42"}, {"SLURM_STEP_ID", step}, {"SLURMD_NODENAME", node}};
    if (!rank.empty()) p.env["RANK"] = rank;
    if (!procid.empty()) p.env["SLURM_PROCID"] = procid;
    return p;
}

std::vector<long> ranks_of(const std::vector<StackTarget>& t) {
    std::vector<long> out;
    for (const auto& x : t) out.push_back(x.rank.value_or(-1));
    return out;
}

TEST(StacksTargets, PlainTasksOfTheStepOnThisNodeOnly) {
    const std::vector<ProcessFacts> all{
        proc(10, 1, "python3", "1", "1"),
        proc(11, 1, "python3", "0", "0"),
        proc(12, 1, "python3", "2", "2", "n2"),       // another node sharing the process table
        proc(13, 1, "python3", "0", "0", "n1", "1"),  // another step of the job
        proc(14, 1, "slurm-ddp", "", "0", "n1", "7"),
    };
    const auto t = select_step_processes(all, "42", "0", "n1");
    EXPECT_EQ(ranks_of(t), (std::vector<long>{0, 1}));
    EXPECT_EQ(t[0].pid, 11);
}

TEST(StacksTargets, WrappersLaunchersAndWorkersAreNotRanks) {
    const std::vector<ProcessFacts> all{
        proc(20, 1, "bash", "3", "3"),             // `bash -c "python x.py"` task
        proc(21, 20, "python3", "3", "3"),         // rank 3
        proc(22, 21, "pt_data_worker", "3", "3"),  // its data loader worker
        proc(30, 1, "torchrun", "", "4"),          // --ddp=launcher: one task, four workers
        proc(31, 30, "python3", "4", "4"),
        proc(32, 30, "python3", "5", "4"),
        proc(40, 1, "c_minimal", "", "6"),  // no RANK at all: SLURM_PROCID
    };
    const auto t = select_step_processes(all, "42", "0", "n1");
    EXPECT_EQ(ranks_of(t), (std::vector<long>{3, 4, 5, 6}));
    EXPECT_EQ(t[0].pid, 21);
    EXPECT_EQ(t[3].pid, 40);
}

TEST(StacksTargets, PyspyIsLookedForBesideTheInterpreterAndOnPaths) {
    ProcessFacts p = proc(1, 0, "python", "0", "0");
    p.argv0 = "/venv/bin/python";
    p.env["PATH"] = "/opt/x/bin:relative:/usr/bin";
    EXPECT_EQ(pyspy_candidates(std::string("/tools/py-spy"), p, std::string("/home/u/bin")),
              (Lines{"/tools/py-spy", "/venv/bin/py-spy", "/opt/x/bin/py-spy", "/usr/bin/py-spy",
                     "/home/u/bin/py-spy"}));
    p.argv0 = "python3";
    EXPECT_EQ(pyspy_candidates(std::nullopt, p, std::nullopt),
              (Lines{"/opt/x/bin/py-spy", "/usr/bin/py-spy"}));
}

TEST(StacksTargets, ToolChoice) {
    const ToolsFound all{"/v/py-spy", "/usr/bin/gdb", "/usr/bin/eu-stack"};
    EXPECT_EQ(choose_tool(true, all)->tool, "py-spy");
    EXPECT_EQ(choose_tool(false, all)->tool, "eu-stack");
    EXPECT_EQ(choose_tool(false, {"", "/usr/bin/gdb", ""})->tool, "gdb");
    const auto py_native = choose_tool(true, {"", "/usr/bin/gdb", ""});
    ASSERT_TRUE(py_native);
    EXPECT_EQ(py_native->tool, "gdb");
    EXPECT_NE(py_native->note.find("pip install py-spy"), std::string::npos);
    const auto none = choose_tool(false, {"/v/py-spy", "", ""});
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().code, Errc::unsupported);
    EXPECT_NE(none.error().message.find("install elfutils (eu-stack) or gdb"), std::string::npos);
    EXPECT_NE(choose_tool(true, {}).error().message.find("pip install py-spy"), std::string::npos);
    EXPECT_EQ(tool_command({"py-spy", "/v/py-spy", ""}, 7),
              (Lines{"/v/py-spy", "dump", "--pid", "7"}));
    EXPECT_EQ(tool_command({"gdb", "/usr/bin/gdb", ""}, 7).back(), "thread apply all bt");
}

TEST(StacksSlurm, TargetSyntax) {
    EXPECT_EQ(parse_step_target("123")->job, "123");
    EXPECT_FALSE(parse_step_target("123")->step.has_value());
    EXPECT_EQ(*parse_step_target("123.4")->step, "4");
    for (const char* bad : {"", "abc", "12.", ".3", "12.batch", "1 2", "12.3.4"}) {
        const auto r = parse_step_target(bad);
        ASSERT_FALSE(r) << bad;
        EXPECT_NE(r.error().message.find("JOBID.STEPID"), std::string::npos);
    }
}

TEST(StacksSlurm, ShowStepAndTheNewestStep) {
    const auto steps = parse_show_step(
        "StepId=42.extern UserId=0 State=RUNNING NodeList=n[1-2] Nodes=2 Tasks=2\n"
        "StepId=42.batch UserId=0 State=RUNNING NodeList=n1 Tasks=1\n"
        "StepId=42.2 UserId=0 State=RUNNING NodeList=n[1-2] Nodes=2 CPUs=5 Tasks=5 Name=python\n"
        "StepId=42.10 UserId=0 State=RUNNING NodeList=n2 Tasks=1\n");
    ASSERT_EQ(steps.size(), 4u);
    EXPECT_EQ(steps[2].nodelist, "n[1-2]");
    EXPECT_EQ(steps[2].tasks, "5");
    EXPECT_EQ(pick_step(steps, {"42", std::nullopt})->step, "10");
    EXPECT_EQ(pick_step(steps, {"42", "2"})->nodelist, "n[1-2]");
    const auto missing = pick_step(steps, {"42", "3"});
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.error().message.find("42.3"), std::string::npos);
    EXPECT_NE(missing.error().message.find("42.batch"), std::string::npos);
    EXPECT_FALSE(pick_step(parse_show_step("StepId=7.batch NodeList=n1\n"), {"7", std::nullopt}));
}

RankStack stack(long rank, const std::string& host, Lines frames, const std::string& error = "") {
    RankStack r;
    r.host = host;
    r.rank = rank;
    r.pid = 100 + static_cast<int>(rank);
    r.comm = "python3";
    r.tool = "py-spy";
    r.frames = std::move(frames);
    r.error = error;
    return r;
}

TEST(StacksReport, RecordsSurviveSrunLabelsAndInterleaving) {
    const auto a = encode_records("n1",
                                  {stack(0, "n1", {"thread", "    f (a.py:1)"}),
                                   stack(2, "n1", {}, "cannot attach with py-spy: x")},
                                  {});
    const auto b =
        encode_records("n2", {stack(1, "n2", {"thread", "    f (a.py:1)"})}, {"something odd"});
    // srun --label prefixes each line; lines of two nodes interleave.
    std::string mixed;
    std::size_t ia = 0;
    std::size_t ib = 0;
    while (ia < a.size() || ib < b.size()) {
        for (const std::string* s : {&a, &b}) {
            std::size_t& i = s == &a ? ia : ib;
            if (i >= s->size()) continue;
            const auto nl = s->find('\n', i);
            mixed += (s == &a ? "0: " : "1: ") + s->substr(i, nl + 1 - i);
            i = nl + 1;
        }
    }
    mixed += "srun: some noise\n";
    const auto c = decode_records(mixed);
    ASSERT_EQ(c.ranks.size(), 3u);
    EXPECT_EQ(*c.ranks[1].rank, 1);
    EXPECT_EQ(c.ranks[1].frames, (Lines{"thread", "    f (a.py:1)"}));
    EXPECT_EQ(c.ranks[2].error, "cannot attach with py-spy: x");
    EXPECT_EQ(c.node_errors.at("n2"), (Lines{"something odd"}));
    EXPECT_EQ(c.nodes_done.size(), 2u);
}

TEST(StacksReport, OddOnesFirstWithRankRanges) {
    const Lines barrier{"thread \"MainThread\"", "    barrier (c10d.py:9)", "    main (t.py:5)"};
    const Lines stuck{"thread \"MainThread\"", "    stuck_here (t.py:2)", "    main (t.py:6)"};
    std::vector<RankStack> ranks{stack(0, "n1", barrier),
                                 stack(1, "n1", barrier),
                                 stack(2, "n1", stuck),
                                 stack(3, "n2", barrier),
                                 stack(4, "n2", {"thread", "    native_wait_here"}),
                                 stack(5, "n2", barrier, "gone")};
    ranks[4].tool = "eu-stack";
    const auto groups = group_stacks(ranks);
    ASSERT_EQ(groups.size(), 3u);
    EXPECT_EQ(describe_members(groups[0].members), "rank 2");
    EXPECT_EQ(describe_members(groups[1].members), "rank 4");
    EXPECT_EQ(describe_members(groups[2].members), "ranks 0-1,3");
    const auto text = format_groups(groups);
    const auto first = text.find("=== 1 process: rank 2 (n1 pid 102, py-spy)\n");
    const auto native = text.find("=== 1 process: rank 4 (n2 pid 104, eu-stack)\n");
    const auto many = text.find("=== 3 processes: ranks 0-1,3 (n[1-2], py-spy)\n");
    ASSERT_NE(first, std::string::npos) << text;
    ASSERT_NE(many, std::string::npos) << text;
    EXPECT_LT(first, native);
    EXPECT_LT(native, many);
    EXPECT_NE(text.find("    stuck_here (t.py:2)\n", first), std::string::npos);
    EXPECT_EQ(text.find("rank 5"), std::string::npos) << "a rank without a stack is no group";
}

}  // namespace
}  // namespace sddp::stacks

// SPDX-License-Identifier: Apache-2.0
// `slurm-ddp stacks`: the tools' output parsed into comparable frames, the step's processes
// picked out of /proc facts, the tool chosen, the records and the grouped report.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "stacks/stacks_frames.hpp"
#include "stacks/stacks_proc.hpp"
#include "stacks/stacks_report.hpp"
#include "stacks/stacks_slurm.hpp"
#include "stacks/stacks_targets.hpp"

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

// `gdb -p P -batch -ex "thread apply all py-bt"` on /usr/bin/python3.11 with Debian 12's
// python3.11-dbg (gdb 13), shortened: what the frame walker prints is read the same way.
constexpr const char* kGdbPyBt =
    "[New LWP 12395]\n"
    "0x00007fadd5713545 in __GI___clock_nanosleep (clock_id=clock_id@entry=1) at "
    "../sysdeps/unix/sysv/linux/clock_nanosleep.c:48\n"
    "\n"
    "Thread 2 (Thread 0x7fadd53886c0 (LWP 12395) \"python3\"):\n"
    "Traceback (most recent call first):\n"
    "  <built-in method sleep of module object at remote 0x7fadd5593470>\n"
    "  File \"/tmp/stk_plain.py\", line 3, in side\n"
    "    time.sleep(1000)\n"
    "  File \"/usr/lib/python3.11/threading.py\", line 975, in run\n"
    "    self._target(*self._args, **self._kwargs)\n"
    "\n"
    "Thread 1 (Thread 0x7fadd56432c0 (LWP 12393) \"python3\"):\n"
    "Traceback (most recent call first):\n"
    "  <built-in method sleep of module object at remote 0x7fadd5593470>\n"
    "  File \"/tmp/stk_plain.py\", line 5, in wait_in_plain_python\n"
    "    time.sleep(1000)\n"
    "  Waiting for the GIL\n"
    "  File \"/tmp/stk_plain.py\", line 7, in <module>\n"
    "    wait_in_plain_python()\n"
    "[Inferior 1 (process 12393) detached]\n";

// gdb_python_frames_command() on a pyenv 3.12 PyTorch process (gdb 13): thread states with
// their ids, the main thread first; a thread without Python frames.
constexpr const char* kGdbWalker =
    "[New LWP 12824]\n"
    "69\t../sysdeps/unix/sysv/linux/select.c: No such file or directory.\n"
    "Thread 1 (Python thread 139958196071296):\n"
    "  File \"/tmp/stk/torchc.py\", line 5, in in_c_extension\n"
    "  File \"/tmp/stk/torchc.py\", line 9, in <module>\n"
    "Thread 2 (Python thread 139955085067968):\n"
    "  File \"/tmp/stk/torchc.py\", line 7, in side\n"
    "  File \"/root/.pyenv/versions/3.12.1/lib/python3.12/threading.py\", line 1010, in run\n"
    "Thread 3 (Python thread 139955076675264):\n"
    "[Inferior 1 (process 12791) detached]\n";

// Where gdb has no extension for the interpreter after all, or no symbols for it.
constexpr const char* kGdbNoPyBt =
    "Thread 2 (Thread 0x7f5a60c486c0 (LWP 12469) \"python\"):\n"
    "Undefined command: \"py-bt\".  Try \"help\".\n";

TEST(StacksFrames, GdbPyBtGivesPythonFramesLikePyspy) {
    EXPECT_EQ(
        parse_gdb_python(kGdbPyBt),
        (Lines{"thread \"python3\"", "    wait_in_plain_python (stk_plain.py:5)",
               "    (waiting for the GIL)", "    <module> (stk_plain.py:7)", "thread \"python3\"",
               "    side (stk_plain.py:3)", "    run (threading.py:975)"}));
    EXPECT_EQ(parse_tool_output("gdb py-bt", kGdbPyBt), parse_gdb_python(kGdbPyBt));
    EXPECT_EQ(parse_gdb_python(kGdbWalker),
              (Lines{"thread", "    in_c_extension (torchc.py:5)", "    <module> (torchc.py:9)",
                     "thread", "    side (torchc.py:7)", "    run (threading.py:1010)"}));
    std::string other = kGdbPyBt;
    other.replace(other.find("0x7fadd5593470"), 14, "0x7fffffffffff");
    other.replace(other.find("LWP 12393"), 9, "LWP 77777");
    EXPECT_EQ(parse_gdb_python(other), parse_gdb_python(kGdbPyBt));
    EXPECT_TRUE(parse_gdb_python(kGdbNoPyBt).empty());
}

TEST(StacksTargets, APyBtWithoutPythonFramesFallsBackToNativeFramesWithANote) {
    const ToolsFound found{"", "/usr/bin/gdb", "/usr/bin/eu-stack", true, "/x/python3.12-gdb.py"};
    ASSERT_EQ(choose_tool(true, found)->tool, "gdb py-bt");
    const auto native = choose_native_fallback(found);
    ASSERT_TRUE(native);
    EXPECT_EQ(native->tool, "eu-stack");
    EXPECT_EQ(native->note.rfind("gdb's py-bt found no Python frame", 0), 0u) << native->note;
    EXPECT_NE(native->note.find("python3-dbg"), std::string::npos) << native->note;
    const auto gdb_only = choose_native_fallback({"", "/usr/bin/gdb", "", true, ""});
    ASSERT_TRUE(gdb_only);
    EXPECT_EQ(gdb_only->tool, "gdb");
    EXPECT_EQ(tool_command(*gdb_only, 7).back(), "thread apply all bt");
}

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
                  const std::string& procid) {
    ProcessFacts p;
    p.pid = pid;
    p.ppid = ppid;
    p.comm = comm;
    p.state = 'S';
    p.env_known = true;
    if (!rank.empty()) p.env["RANK"] = rank;
    if (!procid.empty()) p.env["SLURM_PROCID"] = procid;
    return p;
}

std::vector<long> ranks_of(const std::vector<StackTarget>& t) {
    std::vector<long> out;
    for (const auto& x : t) out.push_back(x.rank.value_or(-1));
    return out;
}

TEST(StacksTargets, EveryListedProcessCountsWhateverItsEnvironmentSays) {
    // Membership comes from listpids: a rank whose program cleared its environment is still
    // one, named by the GLOBALID Slurm gave its task.
    ProcessFacts cleared = proc(10, 1, "c_minimal", "", "");
    cleared.task_rank = 3;
    ProcessFacts plain = proc(11, 1, "python3", "1", "1");
    plain.task_rank = 1;
    ProcessFacts renamed = proc(12, 1, "x", "0", "");  // RANK says 0: shown as it says
    renamed.task_rank = 2;
    const auto t = select_step_processes({plain, cleared, renamed});
    EXPECT_EQ(ranks_of(t), (std::vector<long>{0, 1, 3}));
    EXPECT_EQ(t[2].pid, 10);
}

TEST(StacksTargets, WhatTheStepDaemonStartedBesideTheTasksIsNoRank) {
    // Tasks 0 and 1 (children of slurmstepd 900) and a SPANK plugin's helper beside them, with
    // slurmstepd's environment (no RANK, no SLURM_PROCID); below a task, a child is kept.
    ProcessFacts t0 = proc(901, 900, "python3", "0", "0");
    t0.task_rank = 0;
    ProcessFacts t1 = proc(902, 900, "bash", "", "1");
    t1.task_rank = 1;
    const auto t = select_step_processes({t0, t1, proc(903, 900, "slurm-ddp-watch", "", ""),
                                          proc(904, 902, "stacks_native", "", "1")});
    EXPECT_EQ(ranks_of(t), (std::vector<long>{0, 1}));
    EXPECT_EQ(t[1].pid, 904);
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
    const auto t = select_step_processes(all);
    EXPECT_EQ(ranks_of(t), (std::vector<long>{3, 4, 5, 6}));
    EXPECT_EQ(t[0].pid, 21);
    EXPECT_EQ(t[3].pid, 40);
}

TEST(StacksTargets, AProcessInDKeepsItsOwnEntry) {
    // Rank 0 is in D: its environment was not read, so its child (RANK=0 too) must not make it
    // look like a launcher, and its rank comes from the task's GLOBALID.
    ProcessFacts blocked = proc(50, 1, "python3", "", "");
    blocked.env_known = false;
    blocked.state = 'D';
    blocked.task_rank = 0;
    blocked.blocked = BlockedThread{50, "fuse_wait", ""};
    // Rank 1's data loader worker is in D: it is reported, not folded into rank 1.
    ProcessFacts worker = proc(62, 61, "pt_data_worker", "", "");
    worker.env_known = false;
    worker.blocked = BlockedThread{62, "nfs_wait", ""};
    // A D process started through a shell Slurm ran as the task: the shell's GLOBALID.
    ProcessFacts shell = proc(70, 1, "bash", "", "");
    shell.env_known = true;
    shell.task_rank = 2;
    ProcessFacts under_shell = proc(71, 70, "python3", "", "");
    under_shell.env_known = false;
    ProcessFacts rank1 = proc(61, 1, "python3", "1", "1");
    rank1.task_rank = 1;
    const auto t = select_step_processes(
        {blocked, proc(51, 50, "python3", "0", "0"), rank1, worker, shell, under_shell});
    ASSERT_EQ(t.size(), 4u);
    EXPECT_EQ(ranks_of(t), (std::vector<long>{-1, 0, 1, 2}));
    EXPECT_EQ(t[0].pid, 62);
    EXPECT_EQ(t[1].pid, 50);
    EXPECT_EQ(t[2].pid, 61);
    EXPECT_EQ(t[3].pid, 71);
}

TEST(StacksTargets, PyspyIsLookedForBesideTheInterpreterAndOnPaths) {
    ProcessFacts p = proc(1, 0, "python", "0", "0");
    p.argv0 = "/venv/bin/python";
    p.env["PATH"] = "/opt/x/bin:relative:/usr/bin";
    p.env["SLURM_DDP_PYSPY"] = "/home/u/evil";
    EXPECT_EQ(pyspy_candidates(std::string("/tools/py-spy"), p, std::string("/home/u/bin"), false),
              (Lines{"/tools/py-spy", "/home/u/evil", "/venv/bin/py-spy", "/opt/x/bin/py-spy",
                     "/usr/bin/py-spy", "/home/u/bin/py-spy"}));
    p.argv0 = "python3";
    p.env.erase("SLURM_DDP_PYSPY");
    EXPECT_EQ(pyspy_candidates(std::nullopt, p, std::nullopt, false),
              (Lines{"/opt/x/bin/py-spy", "/usr/bin/py-spy"}));
}

TEST(StacksTargets, AsRootPyspyComesOnlyFromOurOwnEnvironment) {
    ProcessFacts p = proc(1, 0, "python", "0", "0");
    p.argv0 = "/venv/bin/python";
    p.env["PATH"] = "/home/u/bin";
    p.env["SLURM_DDP_PYSPY"] = "/home/u/evil";
    EXPECT_EQ(pyspy_candidates(std::string("/opt/py-spy"), p,
                               std::string("/usr/local/bin:/usr/bin"), true),
              (Lines{"/opt/py-spy", "/usr/local/bin/py-spy", "/usr/bin/py-spy"}));
    EXPECT_TRUE(pyspy_candidates(std::nullopt, p, std::nullopt, true).empty());
}

TEST(StacksTargets, PythonGdbExtensionPlaces) {
    EXPECT_EQ(python_gdb_scripts("/usr/bin/python3.11", "", "/usr/share/gdb").size(), 3u);
    const auto s = python_gdb_scripts("/opt/py/bin/python3.12", "/opt/py/lib/libpython3.12.so.1.0",
                                      "/usr/share/gdb");
    ASSERT_EQ(s.size(), 6u);
    EXPECT_EQ(s[0].path, "/usr/share/gdb/auto-load/opt/py/lib/libpython3.12.so.1.0-gdb.py");
    EXPECT_FALSE(s[0].beside);
    EXPECT_EQ(s[1].path, "/usr/lib/debug/opt/py/lib/libpython3.12.so.1.0-gdb.py");
    EXPECT_EQ(s[2].path, "/usr/share/gdb/auto-load/opt/py/bin/python3.12-gdb.py");
    EXPECT_EQ(s[4].path, "/opt/py/lib/libpython3.12.so.1.0-gdb.py");
    EXPECT_TRUE(s[4].beside);
    EXPECT_EQ(s[5].path, "/opt/py/bin/python3.12-gdb.py");
    EXPECT_TRUE(python_gdb_scripts("", "", "/usr/share/gdb").empty());
}

TEST(StacksTargets, ToolChoice) {
    const ToolsFound all{"/v/py-spy", "/usr/bin/gdb", "/usr/bin/eu-stack", false, ""};
    EXPECT_EQ(choose_tool(true, all)->tool, "py-spy");
    EXPECT_EQ(choose_tool(false, all)->tool, "eu-stack");
    EXPECT_EQ(choose_tool(false, {"", "/usr/bin/gdb", "", false, ""})->tool, "gdb");
    const auto py_native = choose_tool(true, {"", "/usr/bin/gdb", "", false, ""});
    ASSERT_TRUE(py_native);
    EXPECT_EQ(py_native->tool, "gdb");
    EXPECT_NE(py_native->note.find("pip install py-spy"), std::string::npos);
    const auto none = choose_tool(false, {"/v/py-spy", "", "", false, ""});
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().code, Errc::unsupported);
    EXPECT_NE(none.error().message.find("install elfutils (eu-stack) or gdb"), std::string::npos);
    EXPECT_NE(choose_tool(true, {}).error().message.find("pip install py-spy"), std::string::npos);
    EXPECT_EQ(tool_command({"py-spy", "/v/py-spy", "", ""}, 7),
              (Lines{"/v/py-spy", "dump", "--pid", "7"}));
    EXPECT_EQ(tool_command({"gdb", "/usr/bin/gdb", "", ""}, 7).back(), "thread apply all bt");
}

TEST(StacksTargets, GdbPyBtWhereGdbHasTheInterpretersExtension) {
    ToolsFound found{"", "/usr/bin/gdb", "/usr/bin/eu-stack", true, ""};
    const auto py = choose_tool(true, found);
    ASSERT_TRUE(py);
    EXPECT_EQ(py->tool, "gdb py-bt");
    EXPECT_TRUE(py->note.empty());
    EXPECT_EQ(choose_tool(false, found)->tool, "eu-stack") << "native ranks keep eu-stack";
    found.pyspy = "/v/py-spy";
    EXPECT_EQ(choose_tool(true, found)->tool, "py-spy") << "py-spy first";
    found = ToolsFound{"", "", "/usr/bin/eu-stack", true, ""};
    EXPECT_EQ(choose_tool(true, found)->tool, "eu-stack") << "py-bt needs gdb";
    EXPECT_NE(choose_tool(true, found)->note.find("python3-dbg"), std::string::npos);

    const auto cmd =
        tool_command({"gdb py-bt", "/usr/bin/gdb", "", "/opt/py/bin/python3.12-gdb.py"}, 7);
    const std::string joined = [&] {
        std::string j;
        for (const auto& c : cmd) j += c + "|";
        return j;
    }();
    EXPECT_NE(joined.find("|-iex|add-auto-load-safe-path /opt/py/bin/python3.12-gdb.py|"),
              std::string::npos)
        << joined;
    EXPECT_NE(joined.find("|-iex|set auto-solib-add off|-ex|sharedlibrary libpython|"),
              std::string::npos)
        << joined;
    // One gdb command on one line: the frame walker given to gdb's Python.
    EXPECT_EQ(cmd.back().rfind("python exec(\"", 0), 0u) << cmd.back();
    EXPECT_EQ(cmd.back().find('\n'), std::string::npos);
    EXPECT_NE(cmd.back().find("PyFramePtr(f).print_traceback()"), std::string::npos);
    EXPECT_NE(cmd.back().find("PyFrameObjectPtr.from_pyobject_ptr(f).print_traceback()"),
              std::string::npos);
    EXPECT_EQ(tool_command({"gdb py-bt", "/usr/bin/gdb", "", ""}, 7)[3], "-batch");
    EXPECT_EQ(joined.find("auto-load safe-path /"), std::string::npos);
    EXPECT_EQ(joined.find("set sysroot"), std::string::npos);
    // A rank in a job container (its own /tmp, our root): gdb reads its files from here, where
    // their names match the interpreter's auto-load extension.
    ToolChoice contained{"gdb py-bt", "/usr/bin/gdb", "", ""};
    contained.host_sysroot = true;
    const auto in_container = tool_command(contained, 7);
    const auto sysroot = std::find(in_container.begin(), in_container.end(), "set sysroot /");
    ASSERT_NE(sysroot, in_container.end());
    EXPECT_EQ(*(sysroot - 1), "-iex");
    EXPECT_LT(sysroot - in_container.begin(),
              std::find(in_container.begin(), in_container.end(), "sharedlibrary libpython") -
                  in_container.begin());
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

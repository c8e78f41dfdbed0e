// SPDX-License-Identifier: Apache-2.0
// `slurm-ddp stacks --local`: the step's processes from `scontrol listpids`, the /proc files
// read first, and the entry of a process in uninterruptible sleep.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "stacks/stacks_proc.hpp"
#include "stacks/stacks_slurm.hpp"

namespace sddp::stacks {
namespace {

using Lines = std::vector<std::string>;

TEST(StacksListpids, TheStepsLinesWithTheirGlobalIds) {
    // Slurm 22.05's `scontrol listpids 42.0 n1`: tasks first (LOCALID, GLOBALID), then the
    // other processes proctrack counts ('-'); another step's line and noise are skipped.
    const auto listed = parse_listpids(
        "PID      JOBID    STEPID   LOCALID GLOBALID\n"
        "4101     42       0        0       0       \n"
        "4103     42       0        1       2       \n"
        "4120     42       0        -       -       \n"
        "4200     42       1        0       0       \n"
        "4300     420      0        0       0       \n"
        "garbage\n"
        "0        42       0        -       -       \n",
        "42", "0");
    ASSERT_EQ(listed.size(), 3u);
    EXPECT_EQ(listed[0].pid, 4101);
    EXPECT_EQ(listed[0].global_id, 0);
    EXPECT_EQ(listed[1].pid, 4103);
    EXPECT_EQ(listed[1].global_id, 2);
    EXPECT_EQ(listed[2].pid, 4120);
    EXPECT_FALSE(listed[2].global_id.has_value());
    EXPECT_TRUE(parse_listpids("PID      JOBID    STEPID   LOCALID GLOBALID\n", "42", "0").empty());
    EXPECT_TRUE(parse_listpids("", "42", "0").empty());
}

TEST(StacksProc, StatFieldsSurviveOddCommandNames) {
    const auto f = parse_proc_stat("4101 (a) b (c)) D 4100 4101 4101 0 -1 4194560 1 0\n");
    ASSERT_TRUE(f);
    EXPECT_EQ(f->comm, "a) b (c)");
    EXPECT_EQ(f->state, 'D');
    EXPECT_EQ(f->ppid, 4100);
    EXPECT_FALSE(parse_proc_stat("4101 python3 S 1"));
    EXPECT_FALSE(parse_proc_stat("4101 (python3)"));
}

TEST(StacksProc, KernelStackWithoutAddressesOrOffsets) {
    EXPECT_EQ(kernel_frames("[<0>] kernel_clone+0x1af/0x3e0\n"
                            "[<0>] __do_sys_vfork+0x43/0x70\n"
                            "[<0>] do_syscall_64+0x71/0x280\n"),
              (Lines{"kernel_clone", "__do_sys_vfork", "do_syscall_64"}));
    EXPECT_TRUE(kernel_frames("").empty());
}

TEST(StacksProc, ARankInDIsShownWhereTheKernelHoldsIt) {
    ProcessFacts p;
    p.pid = 4101;
    p.comm = "stacks_dstate";
    p.state = 'D';
    p.blocked = BlockedThread{4101, "kernel_clone",
                              "[<0>] kernel_clone+0x1af/0x3e0\n[<0>] __do_sys_vfork+0x43/0x70\n"};
    const auto e = blocked_entry(p);
    EXPECT_EQ(e.tool, "kernel");
    EXPECT_EQ(e.frames, (Lines{"thread \"stacks_dstate\" in uninterruptible sleep (D)",
                               "    kernel_clone [kernel]", "    __do_sys_vfork [kernel]"}));
    EXPECT_NE(e.note.find("in uninterruptible sleep (D) in kernel_clone"), std::string::npos)
        << e.note;
    EXPECT_EQ(e.note.find("root only"), std::string::npos) << e.note;

    // Without root the kernel stack is unreadable: the wchan alone, and why.
    p.blocked->kernel_stack.clear();
    const auto user = blocked_entry(p);
    EXPECT_EQ(user.frames, (Lines{"thread \"stacks_dstate\" in uninterruptible sleep (D)",
                                  "    kernel_clone [kernel]"}));
    EXPECT_NE(user.note.find("/proc/4101/task/4101/stack) is readable by root only"),
              std::string::npos)
        << user.note;
}

}  // namespace
}  // namespace sddp::stacks

// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <map>

#include <csignal>

#include "core/task/task_failure.hpp"

using namespace sddp;

namespace {
int exited(int code) {
    return (code & 0xff) << 8;
}
int signaled(int sig) {
    return sig & 0x7f;
}
}  // namespace

TEST(TaskFailure, SuccessIsNoFailure) {
    ASSERT_TRUE(WIFEXITED(exited(0)));
    EXPECT_EQ(classify_task_end(exited(0)).action, FailFastAction::none);
}

TEST(TaskFailure, NonZeroExitEndsTheStepWithAReport) {
    const auto end = classify_task_end(exited(7));
    EXPECT_EQ(end.action, FailFastAction::report_and_end);
    EXPECT_EQ(end.how, "exit status 7");
    EXPECT_EQ(fail_fast_message(3, "n2", end, 12, 0),
              "rank 3 on n2 ended with exit status 7; ending the other ranks of step 12.0 "
              "(--ddp=keep-going keeps them running)");
}

TEST(TaskFailure, CrashSignalEndsTheStepWithAReport) {
    ASSERT_TRUE(WIFSIGNALED(signaled(SIGSEGV)));
    const auto end = classify_task_end(signaled(SIGSEGV));
    EXPECT_EQ(end.action, FailFastAction::report_and_end);
    EXPECT_EQ(end.how.rfind("signal 11", 0), 0u) << end.how;
    EXPECT_NE(fail_fast_message(0, "n1", end, 5, 1).find("rank 0 on n1 was killed by signal 11"),
              std::string::npos);
    EXPECT_EQ(classify_task_end(signaled(SIGABRT) | 0x80).action,  // core dumped
              FailFastAction::report_and_end);
}

TEST(TaskFailure, SigkillEndsTheStepQuietly) {
    EXPECT_EQ(classify_task_end(signaled(SIGKILL)).action, FailFastAction::end_step);
}

TEST(TaskFailure, StepWideSignalsAreNotFailures) {
    // Every task gets these from Slurm (scancel, time limit, --signal): ranks still saving a
    // checkpoint must not be killed because a rank without a handler died of the same signal.
    for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2}) {
        EXPECT_EQ(classify_task_end(signaled(sig)).action, FailFastAction::none) << sig;
    }
}

TEST(TaskFailure, RestartsFromSlurmDdpRunOnlyForThisJob) {
    // `slurm-ddp run` counted runs of this job's step: its count wins over SLURM_RESTART_COUNT.
    EXPECT_EQ(restarts_value("2", "41", "41", 0), "2");
    // Inherited from another job, not a count, or without the job marker: the job's own count.
    EXPECT_EQ(restarts_value("2", "40", "41", 1), "1");
    EXPECT_EQ(restarts_value("two", "41", "41", 1), "1");
    EXPECT_EQ(restarts_value("2", std::nullopt, "41", 0), "0");
    EXPECT_EQ(restarts_value(std::nullopt, std::nullopt, "41", 3), "3");
    EXPECT_EQ(restarts_value("2", "", "", 0), "0");
}

TEST(TaskFailure, RestartsAssignmentFromTheTasksVariables) {
    using Vars = std::map<std::string, std::string, std::less<>>;
    auto value = [](Vars v) { return restarts_assignment(map_env(std::move(v))).value; };
    EXPECT_EQ(restarts_assignment(map_env({})).name, "SLURM_DDP_RESTARTS");
    EXPECT_FALSE(restarts_assignment(map_env({})).keep_existing);
    EXPECT_EQ(value({}), "0");
    EXPECT_EQ(value({{"SLURM_RESTART_COUNT", "2"}}), "2");
    EXPECT_EQ(value({{"SLURM_RESTART_COUNT", "x"}}), "0");
    EXPECT_EQ(value({{"SLURM_RESTART_COUNT", "1"},
                     {"SLURM_DDP_RESTARTS", "3"},
                     {"SLURM_DDP_RESTARTS_JOB", "77"},
                     {"SLURM_JOB_ID", "77"}}),
              "3");
    EXPECT_EQ(value({{"SLURM_DDP_RESTARTS", "3"},
                     {"SLURM_DDP_RESTARTS_JOB", "76"},
                     {"SLURM_JOB_ID", "77"}}),
              "0");
}

TEST(TaskFailure, StepWideSignalsAreTheOnesSlurmSendsToEveryTask) {
    for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2})
        EXPECT_TRUE(is_step_wide_signal(sig));
    for (int sig : {SIGKILL, SIGSEGV, SIGCONT, SIGCHLD, 0, 99})
        EXPECT_FALSE(is_step_wide_signal(sig));
}

TEST(TaskFailure, PendingSignalsFromProcStatus) {
    // /proc/PID/status of a process with SIGTERM (15) waiting in its thread queue and SIGUSR1 (10)
    // in the shared one, as the kernel prints them.
    const std::string status =
        "Name:\tslurm-ddp-watch\nState:\tS (sleeping)\nSigQ:\t2/31000\n"
        "SigPnd:\t0000000000004000\nShdPnd:\t0000000000000200\nSigBlk:\t0000000000006a03\n";
    const auto mask = pending_signal_mask(status);
    ASSERT_TRUE(mask.has_value());
    EXPECT_EQ(*mask, (1ull << (SIGTERM - 1)) | (1ull << (SIGUSR1 - 1)));
    EXPECT_EQ(first_step_wide_signal(*mask), SIGUSR1);  // the lower number first
    EXPECT_EQ(first_step_wide_signal(1ull << (SIGTERM - 1)), SIGTERM);
    // SIGCHLD (17) and SIGKILL are not a shutdown of the step.
    EXPECT_EQ(first_step_wide_signal((1ull << (SIGCHLD - 1)) | (1ull << (SIGKILL - 1))), 0);
    EXPECT_EQ(first_step_wide_signal(0), 0);
    EXPECT_EQ(pending_signal_mask("SigPnd:\t0000000000000000\n"), 0u);
    EXPECT_FALSE(pending_signal_mask("Name:\tx\nState:\tS\n").has_value());
    EXPECT_FALSE(pending_signal_mask("SigPnd:\tzz\n").has_value());
    EXPECT_FALSE(pending_signal_mask("SigPnd:\t00000000000000001\n").has_value());  // 17 digits
    EXPECT_FALSE(pending_signal_mask("XSigPnd:\t1\n").has_value());
}

TEST(TaskFailure, AnEndAfterTheStepWasSignalledIsPartOfItsShutdown) {
    const auto end = classify_task_end(exited(1));
    EXPECT_EQ(shutdown_end_message(0, "n1", end, SIGTERM, 12, 0),
              "rank 0 on n1 ended with exit status 1 after step 12.0 got SIGTERM: part of its "
              "shutdown, the other ranks are left to finish");
    EXPECT_EQ(signal_label(SIGUSR1), "SIGUSR1");
    EXPECT_EQ(signal_label(0), "signal 0");
}

TEST(TaskFailure, FailFastForStepsThatAskedUnlessTheSiteWidensIt) {
    StepOptions asked;
    EXPECT_TRUE(fail_fast_applies(asked, true));
    // default=on alone: an ordinary `srun -n64 ./sweep` keeps Slurm's behaviour.
    EXPECT_FALSE(fail_fast_applies(asked, false));
    StepOptions all;
    all.fail_fast = FailFastScope::all;
    EXPECT_TRUE(fail_fast_applies(all, false));
    all.keep_going = true;
    EXPECT_FALSE(fail_fast_applies(all, false));
    StepOptions keep;
    keep.keep_going = true;
    EXPECT_FALSE(fail_fast_applies(keep, true));
    keep.keep_going = false;
    EXPECT_TRUE(fail_fast_applies(keep, true));
}

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

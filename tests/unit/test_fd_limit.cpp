// SPDX-License-Identifier: Apache-2.0
// FdLimitRaise: the rendezvous raises the soft open-file limit only as far as it needs, and puts
// it back when it is done (the trainer and what it forks inherit the limit).
#include <gtest/gtest.h>
#include <sys/resource.h>

#include "rendezvous/tcp/fd_limit.hpp"

using namespace sddp;

TEST(FdLimit, SoftLimitForWhatIsNeeded) {
    EXPECT_EQ(fd_soft_limit_for(1024, 1048576, 12, 100), 1024u);   // enough already
    EXPECT_EQ(fd_soft_limit_for(1024, 1048576, 12, 5000), 5012u);  // raised that far only
    EXPECT_EQ(fd_soft_limit_for(1024, 4096, 12, 100000), 4096u);   // never above the hard one
    EXPECT_EQ(fd_soft_limit_for(8192, 1048576, 12, 5000), 8192u);  // never lowered
}

TEST(FdLimit, RaisesOnlyWhatItNeedsAndRestores) {
    rlimit original{};
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &original), 0);
    if (original.rlim_max != RLIM_INFINITY && original.rlim_max < 4096)
        GTEST_SKIP() << "hard RLIMIT_NOFILE " << original.rlim_max << " too low for this test";
    rlimit low = original;
    low.rlim_cur = 256;
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
    {
        FdLimitRaise raised(2000);
        rlimit now{};
        ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &now), 0);
        EXPECT_EQ(now.rlim_cur, raised.soft());
        EXPECT_GE(now.rlim_cur, 2000u);
        EXPECT_LT(now.rlim_cur, 2000u + 256u) << "raised beyond what was asked";
        FdLimitRaise moved = std::move(raised);  // one restore, by the last owner
        EXPECT_EQ(moved.soft(), now.rlim_cur);
    }
    rlimit after{};
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &after), 0);
    EXPECT_EQ(after.rlim_cur, 256u) << "the soft limit was not restored";
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &original), 0);
}

// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "rendezvous/protocol/secret_policy.hpp"

using namespace sddp;

TEST(SecretPolicy, ASecretOrAnOptInIsEnough) {
    EXPECT_TRUE(check_secret_policy({true, false, std::nullopt}).ok());
    EXPECT_TRUE(check_secret_policy({true, false, std::string("12.3")}).ok());
    EXPECT_TRUE(check_secret_policy({false, true, std::nullopt}).ok());
    EXPECT_TRUE(check_secret_policy({false, true, std::string("12.3")}).ok());
}

TEST(SecretPolicy, DdpTaskWithoutSecretNamesTheLikelyCauses) {
    const Status s = check_secret_policy({false, false, std::string("812.0")});
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code, Errc::auth);
    for (const char* want : {"SLURM_DDP_SECRET is not set", "SLURM_DDP_STEP='812.0'",
                             "plugstack.conf", "default=on", "container", "--export"}) {
        EXPECT_NE(s.error().message.find(want), std::string::npos) << want << "\n"
                                                                   << s.error().message;
    }
}

TEST(SecretPolicy, BareLaunchWithoutSecretNamesTheOptIn) {
    const Status s = check_secret_policy({false, false, std::nullopt});
    ASSERT_FALSE(s.ok());
    for (const char* want : {"SLURM_DDP_SECRET", "srun --ddp", "SLURM_DDP_ALLOW_UNAUTHENTICATED=1",
                             "allow_unauthenticated"}) {
        EXPECT_NE(s.error().message.find(want), std::string::npos) << want;
    }
}

TEST(SecretPolicy, OptInVariable) {
    EXPECT_FALSE(*parse_allow_unauthenticated(std::nullopt));
    EXPECT_FALSE(*parse_allow_unauthenticated(std::string()));
    EXPECT_FALSE(*parse_allow_unauthenticated(std::string("0")));
    EXPECT_TRUE(*parse_allow_unauthenticated(std::string("1")));
    const auto bad = parse_allow_unauthenticated(std::string("yes"));
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("SLURM_DDP_ALLOW_UNAUTHENTICATED"), std::string::npos);
}

// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "core/options.hpp"

using namespace sddp;

TEST(Options, BareAndNullMeanOnWithDefaults) {
    for (const char* text : {"", "(null)", "  "}) {
        auto o = parse_user_options(text);
        ASSERT_TRUE(o.ok()) << text;
        EXPECT_FALSE(o->enabled.has_value());
        EXPECT_FALSE(o->port.has_value());
    }
}

TEST(Options, ParsesEveryKey) {
    auto o = parse_user_options(
        "port=29500,gpu-bind=closest,verbose,gpu-share,nccl-hints,override,timeout=600,addr-suffix="
        "-ib");
    ASSERT_TRUE(o.ok()) << o.error().message;
    EXPECT_EQ(*o->port, 29500);
    EXPECT_EQ(*o->gpu_bind, "closest");
    EXPECT_TRUE(*o->verbose);
    EXPECT_TRUE(*o->gpu_share);
    EXPECT_TRUE(*o->nccl_hints);
    EXPECT_TRUE(*o->override_env);
    EXPECT_EQ(*o->timeout_s, 600u);
    EXPECT_EQ(*o->addr_suffix, "-ib");
}

TEST(Options, FlagValues) {
    EXPECT_FALSE(*parse_user_options("verbose=no")->verbose);
    EXPECT_TRUE(*parse_user_options("verbose=yes")->verbose);
    auto bad = parse_user_options("verbose=maybe");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("maybe"), std::string::npos);
}

TEST(Options, OffAndOn) {
    EXPECT_FALSE(*parse_user_options("off")->enabled);
    EXPECT_TRUE(*parse_user_options("on")->enabled);
    auto both = parse_user_options("off,verbose");
    ASSERT_FALSE(both.ok());
    EXPECT_NE(both.error().message.find("off"), std::string::npos);
    EXPECT_FALSE(parse_user_options("off=1").ok());
}

struct BadOption {
    const char* text;
    const char* must_mention;
};

class OptionErrors : public ::testing::TestWithParam<BadOption> {};

TEST_P(OptionErrors, NamesTheProblem) {
    auto o = parse_user_options(GetParam().text);
    ASSERT_FALSE(o.ok()) << GetParam().text;
    EXPECT_EQ(o.error().code, Errc::invalid_input);
    EXPECT_NE(o.error().message.find(GetParam().must_mention), std::string::npos)
        << o.error().message;
}

INSTANTIATE_TEST_SUITE_P(
    All, OptionErrors,
    ::testing::Values(BadOption{"prot=29500", "prot"},      // typo: unknown key named
                      BadOption{"prot=29500", "gpu-bind"},  // ...and valid keys listed
                      BadOption{"port=abc", "abc"}, BadOption{"port=80", "1024"},
                      BadOption{"port=70000", "70000"}, BadOption{"port=", "port"},
                      BadOption{"port", "port"}, BadOption{"gpu-bind=fastest", "fastest"},
                      BadOption{"gpu-bind=fastest", "closest"},
                      BadOption{"verbose,,port=1", "empty"}, BadOption{"verbose,", "comma"},
                      BadOption{",verbose", "empty"}, BadOption{"port=29500,port=29501", "twice"},
                      BadOption{"addr=a,addr-suffix=-ib", "addr-suffix"},
                      BadOption{"addr=bad host", "bad host"}, BadOption{"timeout=0", "timeout"},
                      BadOption{"timeout=-5", "-5"},
                      BadOption{"gpu-bind=none,gpu-share", "gpu-share"},
                      BadOption{"default=on", "plugin argument"},
                      BadOption{"port-range=1-2", "plugin argument"}));

TEST(Options, OversizedInputIsRefusedNotParsed) {
    std::string huge(100000, 'v');
    auto o = parse_user_options(huge);
    ASSERT_FALSE(o.ok());
    EXPECT_EQ(o.error().code, Errc::too_large);
    EXPECT_LT(o.error().message.size(), 400u);
}

TEST(SiteArguments, ParsesWordsAndCommaLists) {
    auto s =
        parse_site_arguments({"default=on", "port-range=21000-21999,gpu-bind=single", "verbose"});
    ASSERT_TRUE(s.ok()) << s.error().message;
    EXPECT_TRUE(*s->enabled);
    EXPECT_EQ(*s->port_range, (PortRange{21000, 21999}));
    EXPECT_EQ(*s->gpu_bind, "single");
    EXPECT_TRUE(*s->verbose);
}

TEST(SiteArguments, RejectsUserOnlyAndJunk) {
    for (auto args : std::vector<std::vector<std::string>>{{"off"},
                                                           {"addr=n1"},
                                                           {"junk"},
                                                           {"port-range=30000-20000"},
                                                           {"port-range=20000"},
                                                           {"default=perhaps"},
                                                           {"default"}}) {
        auto s = parse_site_arguments(args);
        EXPECT_FALSE(s.ok()) << args[0];
        if (!s.ok()) {
            EXPECT_NE(s.error().message.find("plugstack.conf"), std::string::npos);
        }
    }
}

TEST(Options, MergeUserOverSite) {
    auto site =
        *parse_site_arguments({"default=on", "gpu-bind=single", "addr-suffix=-ib", "timeout=100"});
    auto user = *parse_user_options("gpu-bind=closest,addr=login1");
    auto m = merge_options(site, user);
    EXPECT_TRUE(*m.enabled);
    EXPECT_EQ(*m.gpu_bind, "closest");
    EXPECT_EQ(*m.addr, "login1");
    EXPECT_FALSE(m.addr_suffix.has_value());  // a literal address replaces the suffix rule
    EXPECT_EQ(*m.timeout_s, 100u);
    auto off = merge_options(site, *parse_user_options("off"));
    EXPECT_FALSE(*off.enabled);
}

TEST(Options, DescribeRoundTrips) {
    auto o = *parse_user_options("port=29501,gpu-bind=single,verbose,timeout=30");
    auto again = parse_user_options(describe_options(o));
    ASSERT_TRUE(again.ok()) << describe_options(o);
    EXPECT_EQ(describe_options(*again), describe_options(o));
}

TEST(Options, CheckFlag) {
    auto o = parse_user_options("check");
    ASSERT_TRUE(o.ok());
    EXPECT_TRUE(o->check.value_or(false));
    EXPECT_EQ(describe_options(*o), "check");
    EXPECT_FALSE(*parse_user_options("check=no")->check);
    auto site = parse_site_arguments({"check"});
    ASSERT_TRUE(site.ok());
    EXPECT_FALSE(merge_options(*site, *parse_user_options("check=off")).check.value_or(true));
}

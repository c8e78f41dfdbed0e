// SPDX-License-Identifier: Apache-2.0
#include "core/slurm/hostlist.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace sddp {
namespace {

using Hosts = std::vector<std::string>;

struct ValidCase {
    const char* list;
    Hosts hosts;
};

// Expected outputs were checked against `scontrol show hostnames` (Slurm 22.05; suffix cases
// against the Slurm >= 23.02 source).
const ValidCase kValid[] = {
    {"n1", {"n1"}},
    {"n[1-3,7]", {"n1", "n2", "n3", "n7"}},
    {"gpu[008-011]", {"gpu008", "gpu009", "gpu010", "gpu011"}},
    {"n[8-011]", {"n8", "n9", "n10", "n11"}},  // width comes from the low bound
    {"n[098-100]", {"n098", "n099", "n100"}},
    {"n[01-2]", {"n01", "n02"}},
    {"n[1,01]", {"n1", "n01"}},
    {"n[2]", {"n2"}},
    {"n[02]", {"n02"}},
    {"n[1-1]", {"n1"}},
    {"n[3,1,2]", {"n3", "n1", "n2"}},
    {"n[1-3,2-4]", {"n1", "n2", "n3", "n2", "n3", "n4"}},
    {"[1-3]", {"1", "2", "3"}},
    {"n[1-2]-ib", {"n1-ib", "n2-ib"}},
    {"n[9-10].cluster", {"n9.cluster", "n10.cluster"}},
    {"a1,b[2-3],c", {"a1", "b2", "b3", "c"}},
    {"node-1.cluster", {"node-1.cluster"}},
    {"a.[1-2]", {"a.1", "a.2"}},
    {"n1,n1", {"n1", "n1"}},
    {"rack[1-2]-node[01-02]", {"rack1-node01", "rack1-node02", "rack2-node01", "rack2-node02"}},
    {"n[1-2][4-5]", {"n14", "n15", "n24", "n25"}},
    {"a[1-2]b[1-2]c[1-2]",
     {"a1b1c1", "a1b1c2", "a2b1c1", "a2b1c2", "a1b2c1", "a1b2c2", "a2b2c1", "a2b2c2"}},
    {"a[1-2]b[1-2]c[1-2]d[1-2]",
     {"a1b1c1d1", "a1b1c1d2", "a2b1c1d1", "a2b1c1d2", "a1b2c1d1", "a1b2c1d2", "a2b2c1d1",
      "a2b2c1d2", "a1b1c2d1", "a1b1c2d2", "a2b1c2d1", "a2b1c2d2", "a1b2c2d1", "a1b2c2d2",
      "a2b2c2d1", "a2b2c2d2"}},
    {"x[1,3]y[5-6]-z", {"x1y5-z", "x1y6-z", "x3y5-z", "x3y6-z"}},
    {"a, b", {"a", "b"}},
    {" a b ", {"a", "b"}},
    {"a\tb\nc", {"a", "b", "c"}},
    {"a ,b , c", {"a", "b", "c"}},
    {"n[0001-0003]", {"n0001", "n0002", "n0003"}},
    {"n000000000000000000000001", {"n000000000000000000000001"}},
    {"n[000000000000000000000001-2]", {"n000000000000000000000001", "n000000000000000000000002"}},
    {"n99999999999999999999", {"n99999999999999999999"}},  // literals stay verbatim
    {"n[18446744073709551614-18446744073709551615]",
     {"n18446744073709551614", "n18446744073709551615"}},
    {"a;b*c:d_e@f", {"a;b*c:d_e@f"}},
};

TEST(Hostlist, ExpandsValidLists) {
    for (const auto& c : kValid) {
        auto r = expand_hostlist(c.list);
        ASSERT_TRUE(r.ok()) << c.list << ": " << r.error().message;
        EXPECT_EQ(*r, c.hosts) << c.list;
    }
}

TEST(Hostlist, FirstHostMatchesExpansion) {
    for (const auto& c : kValid) {
        auto first = first_hostlist_host(c.list);
        ASSERT_TRUE(first.ok()) << c.list << ": " << first.error().message;
        EXPECT_EQ(*first, c.hosts.front()) << c.list;
    }
}

TEST(Hostlist, FirstHostIgnoresTheCap) {
    auto first = first_hostlist_host("gpu[0005-9999999],b[3-99999999]c[7-9]");
    ASSERT_TRUE(first.ok()) << first.error().message;
    EXPECT_EQ(*first, "gpu0005");
    EXPECT_EQ(expand_hostlist("gpu[0005-9999999],b[3-99999999]c[7-9]").error().code,
              Errc::too_large);
}

struct BadCase {
    const char* list;
    Errc code;
    const char* must_mention;  // the offending value, quoted in the message
};

const BadCase kBad[] = {
    {"", Errc::invalid_input, "empty"},
    {" \t\n", Errc::invalid_input, "empty"},
    {"n[3-1]", Errc::invalid_input, "'3-1'"},
    {"a,n[3-1]", Errc::invalid_input, "'n[3-1]'"},
    {"n[1-3", Errc::invalid_input, "'n[1-3'"},
    {"n1-3]", Errc::invalid_input, "'n1-3]'"},
    {"n[1-2]]", Errc::invalid_input, "'n[1-2]]'"},
    {"n[[1-2]]", Errc::invalid_input, "'n[[1-2]]'"},
    {"a[1-2b[3]", Errc::invalid_input, "'a[1-2b[3]'"},
    {"a]1[2]", Errc::invalid_input, "'a]1[2]'"},
    {"a,,b", Errc::invalid_input, "'a,,b'"},
    {",a", Errc::invalid_input, "','"},
    {"a,", Errc::invalid_input, "trailing"},
    {"a , ,b", Errc::invalid_input, "empty element"},
    {"n[]", Errc::invalid_input, "'n[]'"},
    {"n[1-2,]", Errc::invalid_input, "'n[1-2,]'"},
    {"n[,1]", Errc::invalid_input, "'n[,1]'"},
    {"n[a-b]", Errc::invalid_input, "'a-b'"},
    {"n[1-x]", Errc::invalid_input, "'1-x'"},
    {"n[1x-2]", Errc::invalid_input, "'1x-2'"},
    {"n[+1-2]", Errc::invalid_input, "'+1-2'"},
    {"n[1-]", Errc::invalid_input, "'1-'"},
    {"n[-1]", Errc::invalid_input, "'-1'"},
    {"n[1--2]", Errc::invalid_input, "'1--2'"},
    {"n[1, 3]", Errc::invalid_input, "whitespace"},
    {"n[ 1-2]", Errc::invalid_input, "'n[ 1-2]'"},
    {"n[99999999999999999999]", Errc::invalid_input, "'99999999999999999999'"},
    {"n[1-18446744073709551616]", Errc::invalid_input, "'1-18446744073709551616'"},
    {"a\rb", Errc::invalid_input, "\\x0d"},
    {"caf\xc3\xa9", Errc::invalid_input, "\\xc3"},
    {"a[0-999999999]", Errc::too_large, "'a[0-999999999]'"},
    {"n[0-18446744073709551615]x[0-18446744073709551615]", Errc::too_large, "limit"},
    {"a[0-1048576]", Errc::too_large, "1048577"},
};

TEST(Hostlist, RejectsMalformedListsWithClearErrors) {
    for (const auto& c : kBad) {
        auto r = expand_hostlist(c.list);
        ASSERT_FALSE(r.ok()) << c.list;
        EXPECT_EQ(r.error().code, c.code) << c.list << ": " << r.error().message;
        EXPECT_NE(r.error().message.find(c.must_mention), std::string::npos)
            << "message for " << c.list << " lacks " << c.must_mention << ": " << r.error().message;
        if (c.code == Errc::invalid_input) {
            EXPECT_NE(r.error().message.find("e.g."), std::string::npos) << r.error().message;
            auto first = first_hostlist_host(c.list);
            ASSERT_FALSE(first.ok()) << c.list;
            EXPECT_EQ(first.error().message, r.error().message);
        }
    }
}

TEST(Hostlist, TruncatesLongInputsInMessages) {
    std::string list(100000, 'a');
    list += "[3-1]";
    auto r = expand_hostlist(list);
    ASSERT_FALSE(r.ok());
    EXPECT_LT(r.error().message.size(), 1000u);
    EXPECT_NE(r.error().message.find("100005 chars"), std::string::npos) << r.error().message;
}

TEST(Hostlist, RejectsOverlongHostNames) {
    const std::string ok_name(kMaxHostNameLength, 'h');
    EXPECT_TRUE(expand_hostlist(ok_name).ok());
    auto r = expand_hostlist(ok_name + "x");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, Errc::invalid_input);
    EXPECT_NE(r.error().message.find("256 characters"), std::string::npos) << r.error().message;
    // The longest generated name counts, not the text: 250 + 6 digits.
    auto ranged = expand_hostlist(std::string(250, 'h') + "[99999-100000]");
    ASSERT_FALSE(ranged.ok());
    EXPECT_NE(ranged.error().message.find("256"), std::string::npos) << ranged.error().message;
}

TEST(Hostlist, EnforcesTheCap) {
    EXPECT_EQ(expand_hostlist("n[1-4]", 4)->size(), 4u);
    auto r = expand_hostlist("n[1-4],m", 4);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, Errc::too_large);
    EXPECT_NE(r.error().message.find("5 hosts"), std::string::npos) << r.error().message;
    EXPECT_EQ(expand_hostlist("n1", 0).error().code, Errc::too_large);
    // The product of several groups is what counts, and it must not wrap around.
    EXPECT_EQ(expand_hostlist("a[1-1024]b[1-1024]c[1-2]").error().code, Errc::too_large);
    EXPECT_EQ(
        expand_hostlist("a[0-18446744073709551615]b[0-18446744073709551615]c[0-1]").error().code,
        Errc::too_large);
    auto full = expand_hostlist("a[1-1024]b[1-1024]");
    ASSERT_TRUE(full.ok()) << full.error().message;
    EXPECT_EQ(full->size(), kMaxHostlistHosts);
    EXPECT_EQ(full->back(), "a1024b1024");
}

TEST(Hostlist, CompressesToSlurmSyntax) {
    EXPECT_EQ(compress_hostlist({}), "");
    EXPECT_EQ(compress_hostlist({"n1", "n2", "n3", "n7"}), "n[1-3,7]");
    EXPECT_EQ(compress_hostlist({"n1"}), "n1");
    EXPECT_EQ(compress_hostlist({"login"}), "login");
    EXPECT_EQ(compress_hostlist({"gpu008", "gpu009", "gpu010", "gpu011"}), "gpu[008-011]");
    EXPECT_EQ(compress_hostlist({"n9", "n10", "n11"}), "n[9-11]");
    EXPECT_EQ(compress_hostlist({"n9", "n010"}), "n[9,010]");
    EXPECT_EQ(compress_hostlist({"n3", "n1", "n2"}), "n[3,1-2]");
    EXPECT_EQ(compress_hostlist({"n1", "m1", "n2"}), "n1,m1,n2");
    EXPECT_EQ(compress_hostlist({"n1", "n1"}), "n[1,1]");
    EXPECT_EQ(compress_hostlist({"a", "b1", "b2", "c"}), "a,b[1-2],c");
    EXPECT_EQ(compress_hostlist({"1", "2"}), "[1-2]");
    EXPECT_EQ(compress_hostlist({"n1-ib", "n2-ib"}), "n1-ib,n2-ib");
    EXPECT_EQ(compress_hostlist({"n18446744073709551615", "n18446744073709551616"}),
              "n18446744073709551615,n18446744073709551616");
}

// Random names drawn from the characters and shapes that stress compress: shared prefixes,
// padding, runs across a power of ten, duplicates, digits inside names, huge numbers.
std::string random_host(std::mt19937_64& rng) {
    static const char* kPrefixes[] = {"n", "gpu", "a1b", "", "node-", "x.y", "r1-n", "n0"};
    static const char kChars[] = "abz09-._;:@";
    std::uniform_int_distribution<int> pick(0, 9);
    std::string h;
    switch (pick(rng)) {
        case 0:  // an arbitrary name
            for (int i = 0, n = 1 + pick(rng); i < n; ++i) h += kChars[rng() % (sizeof kChars - 1)];
            return h;
        case 1:  // a number too large for 64 bits
            return "n" + std::to_string(rng()) + std::to_string(rng() % 1000);
        default:
            break;
    }
    h = kPrefixes[rng() % (sizeof kPrefixes / sizeof kPrefixes[0])];
    std::string digits = std::to_string(rng() % (pick(rng) < 5 ? 15 : 120));
    if (pick(rng) < 3) digits.insert(0, rng() % 3 + 1, '0');
    return h + digits;
}

TEST(Hostlist, CompressRoundTripsRandomHostVectors) {
    std::mt19937_64 rng(20240611);
    for (int iter = 0; iter < 3000; ++iter) {
        Hosts hosts;
        const int n = 1 + static_cast<int>(rng() % 40);
        for (int i = 0; i < n; ++i) {
            // Runs of consecutive hosts are the common case; make many of them.
            if (!hosts.empty() && rng() % 3 != 0) {
                auto base = hosts.back();
                std::size_t d = base.size();
                while (d > 0 && base[d - 1] >= '0' && base[d - 1] <= '9') --d;
                if (d < base.size() && base.size() - d < 18) {
                    const auto width = base.size() - d;
                    auto next = std::to_string(std::stoull(base.substr(d)) + 1);
                    if (next.size() < width) next.insert(0, width - next.size(), '0');
                    hosts.push_back(base.substr(0, d) + next);
                    continue;
                }
            }
            hosts.push_back(random_host(rng));
        }
        const auto list = compress_hostlist(hosts);
        auto back = expand_hostlist(list);
        ASSERT_TRUE(back.ok()) << list << ": " << back.error().message;
        ASSERT_EQ(*back, hosts) << list;
    }
}

TEST(Hostlist, CompressRoundTripsExpandedLists) {
    for (const auto& c : kValid) {
        const auto list = compress_hostlist(c.hosts);
        auto back = expand_hostlist(list);
        ASSERT_TRUE(back.ok()) << c.list << " -> " << list << ": " << back.error().message;
        EXPECT_EQ(*back, c.hosts) << c.list << " -> " << list;
    }
    // Compressing a big contiguous range stays short.
    auto big = expand_hostlist("n[00001-65536]");
    ASSERT_TRUE(big.ok());
    EXPECT_EQ(compress_hostlist(*big), "n[00001-65536]");
}

}  // namespace
}  // namespace sddp

// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <variant>

#include "core/options/options.hpp"
#include "core/options/options_help.hpp"

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
    EXPECT_EQ(*o->gpu_bind, GpuBindPolicy::closest);
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

// The trainer-facing options (ports, nproc, rank-order, hints, debug, launcher, torchelastic).
INSTANTIATE_TEST_SUITE_P(Trainer, OptionErrors,
                         ::testing::Values(BadOption{"ports=0", "from 1 to 256"},
                                           BadOption{"ports=999", "ports='999'"},
                                           BadOption{"ports", "ports=4"},
                                           BadOption{"nproc=4", "without launcher"},
                                           BadOption{"launcher,nproc=x", "from 1 to 1024"},
                                           BadOption{"rank-order=cyclic", "block"},
                                           BadOption{"launcher,rank-order=node", "drop rank-order"},
                                           BadOption{"net-hints,nccl-hints", "twice"},
                                           BadOption{"debug=a b", "without spaces"},
                                           BadOption{"launcher=maybe", "launcher=yes|no"},
                                           BadOption{"torchelastic=2", "torchelastic=yes|no"}));

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
    EXPECT_EQ(*s->gpu_bind, GpuBindPolicy::single);
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
    EXPECT_TRUE(m.enabled);
    EXPECT_EQ(m.gpu_bind, GpuBindPolicy::closest);
    EXPECT_EQ(*m.addr, "login1");
    EXPECT_EQ(m.addr_suffix, "");  // a literal address replaces the suffix rule
    EXPECT_EQ(*m.timeout_s, 100u);
    auto off = merge_options(site, *parse_user_options("off"));
    EXPECT_FALSE(off.enabled);
}

// What neither the site nor the user gave is the option's declared default: a bare --ddp and a
// default-constructed StepOptions agree, and every value default is the table row's.
TEST(Options, MergeResolvesEveryDefaultFromItsDeclaration) {
    const StepOptions bare = merge_options(DdpOptions{}, DdpOptions{});
    const StepOptions constructed;
    EXPECT_EQ(describe_options(bare), "");
    EXPECT_EQ(describe_options(constructed), "");
    for (const StepOptions* o : {&bare, &constructed}) {
        EXPECT_FALSE(o->enabled);
        EXPECT_EQ(o->gpu_bind, kDefaultGpuBind);
        EXPECT_EQ(o->rank_order, kDefaultRankOrder);
        EXPECT_EQ(o->fail_fast, kDefaultFailFast);
        EXPECT_EQ(o->port_range, kDefaultPortRange);
        EXPECT_EQ(o->debug_dir, kDefaultDebugDir);
        EXPECT_EQ(o->addr_suffix, "");
        EXPECT_FALSE(o->gpu_share || o->nccl_hints || o->verbose || o->check || o->override_env ||
                     o->launcher || o->torchelastic || o->debug || o->jax || o->tf || o->hostfile ||
                     o->keep_going || o->requeue);
        // Defaults that come from the step stay unset.
        EXPECT_FALSE(o->port || o->addr || o->timeout_s || o->nproc || o->ports);
    }
}

TEST(Options, GpuBindUnderTfIsSingleUnlessGiven) {
    EXPECT_EQ(merge_options({}, *parse_user_options("tf")).gpu_bind, GpuBindPolicy::single);
    EXPECT_EQ(merge_options({}, *parse_user_options("tf,gpu-bind=local")).gpu_bind,
              GpuBindPolicy::local);
    auto site = parse_site_arguments({"gpu-bind=closest"});
    ASSERT_TRUE(site.ok());
    EXPECT_EQ(merge_options(*site, *parse_user_options("tf")).gpu_bind, GpuBindPolicy::closest);
    // The rule is the default's, not a choice: the description stays what was given.
    EXPECT_EQ(describe_options(merge_options({}, *parse_user_options("tf"))), "tf");
}

TEST(Options, DescribeShowsWhatAVerdictChanged) {
    StepOptions o = merge_options({}, *parse_user_options("verbose"));
    EXPECT_EQ(describe_options(o), "verbose");
    o.override_env = true;  // as the task pass does for a container's MASTER_*
    EXPECT_EQ(describe_options(o), "verbose,override");
}

TEST(Options, CheckTimeoutIsBounded) {
    EXPECT_EQ(check_timeout_seconds(StepOptions{}), kCheckTimeoutSeconds);
    EXPECT_EQ(check_timeout_seconds(merge_options({}, *parse_user_options("timeout=12"))), 12u);
    EXPECT_EQ(check_timeout_seconds(merge_options({}, *parse_user_options("timeout=600"))),
              kCheckTimeoutMaxSeconds);
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
    EXPECT_TRUE(merge_options(*site, DdpOptions{}).check);
    EXPECT_FALSE(merge_options(*site, *parse_user_options("check=off")).check);
}

// ---- The option table: every row is complete, parses, and is refused where it conflicts. ----

namespace {

bool site_only(std::string_view name) {
    const OptionSpec* o = find_option(name);
    return o != nullptr && o->scope == OptionScope::site;
}

// A row's example with what it requires ("!launcher" conflicts: nproc needs launcher).
std::string with_requirements(const OptionSpec& o, std::string text) {
    for (const auto& c : option_conflicts()) {
        if (c.first == o.name && c.second.starts_with("!"))
            text = std::string(c.second.substr(1)) + "," + text;
    }
    return text;
}

Result<DdpOptions> parse_in_scope(const OptionSpec& o, std::string text) {
    text = with_requirements(o, std::move(text));
    if (o.scope == OptionScope::site) return parse_site_arguments({text});
    return parse_user_options(text);
}

std::string row_name(const ::testing::TestParamInfo<OptionSpec>& info) {
    std::string n(info.param.name);
    for (auto& c : n)
        if (c == '-') c = '_';
    return n;
}

}  // namespace

namespace sddp {
// gtest names a row by its option, not by its bytes.
void PrintTo(const OptionSpec& o, std::ostream* os) {
    *os << o.name;
}
}  // namespace sddp

class OptionRow : public ::testing::TestWithParam<OptionSpec> {};

TEST_P(OptionRow, HasHelpExampleAndDefault) {
    const OptionSpec& o = GetParam();
    EXPECT_FALSE(o.help.empty()) << o.name;
    EXPECT_FALSE(option_default_text(o).empty()) << o.name;
    // A default is declared once: as a value, or (where it is not one) in words.
    EXPECT_TRUE(has_value_default(o) == o.default_text.empty()) << o.name;
    EXPECT_FALSE(o.example.empty()) << o.name;
    EXPECT_TRUE(o.example == o.name || o.example.starts_with(std::string(o.name) + "="))
        << o.example;
    const std::string help = format_options_help(HelpFormat::text);
    EXPECT_NE(help.find("  " + std::string(o.name)), std::string::npos) << o.name;
    EXPECT_NE(help.find(std::string(o.help)), std::string::npos) << o.name;
    if (o.type == OptionType::number) {
        EXPECT_LE(o.min, o.max) << o.name;
        EXPECT_GT(o.max, 0u) << o.name;
    }
    if (o.type == OptionType::choice) {
        EXPECT_FALSE(o.choices.empty()) << o.name;
    }
    if (!o.alias_of.empty()) {
        ASSERT_NE(find_option(o.alias_of), nullptr) << o.alias_of;
    }
}

TEST_P(OptionRow, DefaultIsInRange) {
    const OptionSpec& o = GetParam();
    if (!has_value_default(o)) GTEST_SKIP() << o.name << " has a derived default";
    const std::string text = o.type == OptionType::set_value
                                 ? std::string(o.name)
                                 : std::string(o.name) + "=" + option_default_text(o);
    auto parsed = parse_in_scope(o, text);
    ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.error().message;
    // The value parsed from the default's text is the declared default, of the field's type.
    std::visit(
        [&](auto member) {
            const auto& got = (*parsed).*member;
            using V = std::decay_t<decltype(*got)>;
            ASSERT_TRUE(got.has_value()) << text;
            if constexpr (std::is_same_v<V, std::uint16_t> || std::is_same_v<V, std::string>) {
                ADD_FAILURE() << o.name << ": a value default for a field of this type";
            } else {
                ASSERT_TRUE(std::holds_alternative<V>(o.default_value)) << o.name;
                EXPECT_TRUE(*got == std::get<V>(o.default_value)) << text;
            }
        },
        o.field);
}

TEST_P(OptionRow, ExampleParsesAndSetsItsField) {
    const OptionSpec& o = GetParam();
    auto parsed = parse_in_scope(o, std::string(o.example));
    ASSERT_TRUE(parsed.ok()) << o.example << ": " << parsed.error().message;
    const bool set =
        std::visit([&](auto member) { return ((*parsed).*member).has_value(); }, o.field);
    EXPECT_TRUE(set) << o.example;
    // What describe_options says parses back to the same options.
    const std::string described = describe_options(*parsed);
    if (!described.empty() && o.scope != OptionScope::site) {
        auto again = parse_user_options(described);
        ASSERT_TRUE(again.ok()) << described << ": " << again.error().message;
        EXPECT_EQ(describe_options(*again), described);
    }
    // The same key without a value where one is needed is refused with the example.
    if (o.type == OptionType::number || o.type == OptionType::port || o.type == OptionType::host ||
        o.type == OptionType::choice) {
        auto bare = parse_in_scope(o, std::string(o.name));
        ASSERT_FALSE(bare.ok()) << o.name;
        EXPECT_NE(bare.error().message.find(std::string(o.example)), std::string::npos)
            << bare.error().message;
    }
}

TEST_P(OptionRow, BadValueNamesKeyAndValue) {
    const OptionSpec& o = GetParam();
    if (o.type == OptionType::flag_or_path || o.type == OptionType::host ||
        o.type == OptionType::set_value)
        GTEST_SKIP() << o.name << " takes any text or no value";
    const std::string text = std::string(o.name) + "=zzz";
    auto parsed = parse_in_scope(o, text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_NE(parsed.error().message.find("zzz"), std::string::npos) << parsed.error().message;
}

INSTANTIATE_TEST_SUITE_P(Table, OptionRow,
                         ::testing::ValuesIn(option_table().begin(), option_table().end()),
                         row_name);

TEST(OptionTable, NamesAreUniqueAndMergeCoversEveryField) {
    std::vector<std::string_view> names;
    for (const auto& o : option_table()) {
        EXPECT_EQ(std::count(names.begin(), names.end(), o.name), 0) << o.name;
        names.push_back(o.name);
    }
    // Each row's example, given by the user, survives a merge over empty site options.
    for (const auto& o : option_table()) {
        if (o.scope == OptionScope::site) continue;
        auto user = parse_user_options(with_requirements(o, std::string(o.example)));
        ASSERT_TRUE(user.ok()) << o.example;
        const StepOptions merged = merge_options(DdpOptions{}, *user);
        EXPECT_EQ(describe_options(merged), describe_options(*user)) << o.example;
    }
}

// A conflict's side as option text: "key" -> the row's example, "key=value" -> itself.
std::string conflict_item(std::string_view side) {
    if (side == "*") return "verbose";
    if (side.find('=') != std::string_view::npos) return std::string(side);
    return std::string(find_option(side)->example);
}

TEST(OptionTable, EveryConflictIsRefused) {
    ASSERT_FALSE(option_conflicts().empty());
    for (const auto& c : option_conflicts()) {
        std::vector<std::string> items{conflict_item(c.first)};
        if (!c.second.starts_with("!")) items.push_back(conflict_item(c.second));
        std::string text;
        for (const auto& i : items) text += (text.empty() ? "" : ",") + i;
        const bool site = std::any_of(items.begin(), items.end(), [](const std::string& i) {
            return site_only(i.substr(0, i.find('=')));
        });
        auto parsed = site ? parse_site_arguments({text}) : parse_user_options(text);
        ASSERT_FALSE(parsed.ok()) << text;
        EXPECT_NE(parsed.error().message.find(std::string(c.message)), std::string::npos)
            << text << ": " << parsed.error().message;
        // Each side alone is fine (where it is a key of its own).
        for (const auto& i : items) {
            if (c.second.starts_with("!")) break;
            auto alone = site_only(i.substr(0, i.find('='))) ? parse_site_arguments({i})
                                                             : parse_user_options(i);
            EXPECT_TRUE(alone.ok()) << i << ": " << alone.error().message;
        }
    }
}

TEST(OptionTable, TypedValues) {
    auto o = parse_user_options("gpu-bind=none,rank-order=node");
    ASSERT_TRUE(o.ok()) << o.error().message;
    EXPECT_EQ(*o->gpu_bind, GpuBindPolicy::none);
    EXPECT_EQ(*o->rank_order, RankOrder::node);
    EXPECT_STREQ(to_string(RankOrder::block), "block");
    auto bad = parse_user_options("rank-order=random");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("block or node"), std::string::npos) << bad.error().message;
}

TEST(OptionTable, NewFrameworkOptionsCombine) {
    auto tf_hostfile = parse_user_options("tf,hostfile");
    ASSERT_TRUE(tf_hostfile.ok()) << tf_hostfile.error().message;
    EXPECT_TRUE(*tf_hostfile->tf);
    EXPECT_TRUE(*tf_hostfile->hostfile);
    auto jax_launcher = parse_user_options("jax,launcher");
    ASSERT_FALSE(jax_launcher.ok());
    EXPECT_NE(jax_launcher.error().message.find("JAX has no per-node launcher"), std::string::npos);
    auto tf_launcher = parse_user_options("launcher,tf");
    ASSERT_FALSE(tf_launcher.ok());
    EXPECT_TRUE(parse_user_options("hostfile,launcher").ok());
    EXPECT_TRUE(parse_user_options("jax=no,launcher").ok());  // turned off: no conflict
}

TEST(Options, KeepGoingAndRequeueFlags) {
    auto o = parse_user_options("keep-going,requeue");
    ASSERT_TRUE(o.ok()) << o.error().message;
    EXPECT_TRUE(o->keep_going.value_or(false));
    EXPECT_TRUE(o->requeue.value_or(false));
    EXPECT_EQ(describe_options(*o), "keep-going,requeue");
    auto site = parse_site_arguments({"keep-going"});
    ASSERT_TRUE(site.ok());
    EXPECT_TRUE(merge_options(*site, DdpOptions{}).keep_going);
    EXPECT_FALSE(merge_options(*site, *parse_user_options("keep-going=no")).keep_going);
    EXPECT_FALSE(parse_user_options("keep-going=perhaps").ok());
    const std::string help = format_options_help(HelpFormat::text);
    EXPECT_NE(help.find("SLURM_DDP_RESTARTS"), std::string::npos);
}

// A row's value default is the one in force where nobody gives the option: writing it out
// changes nothing a consumer reads. (ports and timeout keep "not given" in force: their defaults
// apply where they are used, a block grown for tf, SLURM_DDP_TIMEOUT left unset.)
TEST(OptionTable, ValueDefaultsAreTheOnesInForce) {
    for (const auto& row : option_table()) {
        if (!has_value_default(row) || !row.alias_of.empty()) continue;
        if (row.name == kPortsParam.option || row.name == kTimeoutParam.option) continue;
        const std::string item = std::string(row.name) + "=" + option_default_text(row);
        const auto given = parse_in_scope(row, item);
        ASSERT_TRUE(given.ok()) << item << ": " << given.error().message;
        StepOptions written = row.scope == OptionScope::site ? merge_options(*given, DdpOptions{})
                                                             : merge_options(DdpOptions{}, *given);
        written.given = DdpOptions{};
        EXPECT_EQ(describe_options(written), "") << item;  // the same fields as a bare --ddp
    }
}

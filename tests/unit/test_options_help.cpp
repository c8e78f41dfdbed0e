// SPDX-License-Identifier: Apache-2.0
// core/options/options_help: the table `srun --ddp=help`, `slurm-ddp options` and the docs print.
#include <gtest/gtest.h>

#include <string>

#include "core/options/options.hpp"
#include "core/options/options_help.hpp"

using namespace sddp;

// srun --help's line for --ddp names every option a user may give, and no plugin argument.
TEST(OptionsHelp, UsageNamesEveryUserOption) {
    const std::string usage = format_option_usage();
    const auto items_at = usage.find("(opts: ");
    ASSERT_NE(items_at, std::string::npos) << usage;
    const std::string items = usage.substr(items_at + 6);
    for (const auto& o : option_table()) {
        // An item starts after "(opts:" or ", " and is the key alone or the key and its value.
        bool listed = false;
        for (const char* end : {",", ";", "=", "["}) {
            listed = listed || items.find(" " + std::string(o.name) + end) != std::string::npos;
        }
        const bool user = o.scope != OptionScope::site && o.alias_of.empty();
        EXPECT_EQ(listed, user) << o.name << " in: " << usage;
    }
}

TEST(OptionsHelp, TextMarkdownAndNamesListEveryOption) {
    const std::string text = format_options_help(HelpFormat::text);
    const std::string md = format_options_help(HelpFormat::markdown);
    const std::string names = format_options_help(HelpFormat::names);
    for (const auto& o : option_table()) {
        EXPECT_NE(md.find("| `" + std::string(o.name)), std::string::npos) << o.name;
        EXPECT_NE(names.find(std::string(o.name) + "\n"), std::string::npos) << o.name;
    }
    EXPECT_NE(text.find("[site only: plugstack.conf]"), std::string::npos);
    EXPECT_NE(text.find("TF_CONFIG"), std::string::npos);
    // The markdown names each number's range and each choice's values from the declaration,
    // and every refused pair with its message.
    EXPECT_NE(md.find("| `ports=K` | 1-256 |"), std::string::npos);
    EXPECT_NE(md.find("local\\|single\\|closest\\|none"), std::string::npos);
    for (const auto& c : option_conflicts()) {
        EXPECT_NE(md.find(std::string(c.message)), std::string::npos) << c.message;
    }
    EXPECT_TRUE(is_help_request("help"));
    EXPECT_TRUE(is_help_request(" help "));
    EXPECT_FALSE(is_help_request("help,verbose"));
    EXPECT_FALSE(is_help_request(""));
    // In slurmstepd "help" is not special: an unknown key whose message lists help.
    auto remote = parse_user_options("help");
    ASSERT_FALSE(remote.ok());
    EXPECT_NE(remote.error().message.find("print this table and exit"), std::string::npos);
}

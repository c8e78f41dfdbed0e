// SPDX-License-Identifier: Apache-2.0
// core/contract/contract: the plugin-library contract's names and the step secret's format.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <string_view>

#include "core/contract/contract.hpp"
#include "os/random_bytes.hpp"

namespace sddp {
namespace {

TEST(Contract, EveryNameIsASlurmDdpVariable) {
    for (std::string_view name :
         {contract::kSecretVar, contract::kTimeoutVar, contract::kPortsVar, contract::kDeviceVar,
          contract::kRestartsVar, contract::kRestartsJobVar, contract::kDebugDirVar}) {
        EXPECT_TRUE(name.starts_with("SLURM_DDP_")) << name;
    }
}

TEST(StepSecret, EncodeThenReadGivesTheBytes) {
    auto raw = random_bytes(contract::kSecretBytes);
    ASSERT_TRUE(raw.ok()) << raw.error().message;
    const std::string value = contract::encode_secret(*raw);
    EXPECT_EQ(value.size(), 2 * contract::kSecretBytes);
    auto read = contract::read_secret(
        map_env(std::map<std::string, std::string, std::less<>>{{contract::kSecretVar, value}}));
    ASSERT_TRUE(read.ok()) << read.error().message;
    EXPECT_EQ(*read, std::string(raw->begin(), raw->end()));
}

TEST(StepSecret, MalformedNamesTheVariableNeverTheValue) {
    auto read = [](const std::string& v) {
        return contract::read_secret(
            map_env(std::map<std::string, std::string, std::less<>>{{contract::kSecretVar, v}}));
    };
    EXPECT_EQ(*read(""), "");
    auto wrong_len = read("abcd");
    ASSERT_FALSE(wrong_len.ok());
    EXPECT_NE(wrong_len.error().message.find(contract::kSecretVar), std::string::npos);
    EXPECT_EQ(wrong_len.error().message.find("abcd"), std::string::npos);
    auto not_hex = read(std::string(63, 'a') + "z");
    ASSERT_FALSE(not_hex.ok());
    EXPECT_NE(not_hex.error().message.find("not a hex digit"), std::string::npos);
    EXPECT_TRUE(contract::read_secret(map_env({}))->empty());
}

}  // namespace
}  // namespace sddp

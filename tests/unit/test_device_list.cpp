// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "core/gpu/device_list.hpp"

using namespace sddp;

namespace {
std::vector<std::string> texts(const std::vector<DeviceId>& ids) {
    std::vector<std::string> out;
    for (const auto& i : ids) out.push_back(i.text);
    return out;
}
}  // namespace

TEST(DeviceList, Indices) {
    auto r = parse_device_list("0,1,2,3");
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->size(), 4u);
    EXPECT_EQ((*r)[2].kind, DeviceIdKind::ordinal);
    EXPECT_EQ((*r)[2].ordinal, 2);
    EXPECT_EQ(format_device_list(*r), "0,1,2,3");
    EXPECT_EQ(texts(*parse_device_list(" 2 , 03")), (std::vector<std::string>{"2", "3"}));
}

TEST(DeviceList, EmptyAndNoDevFilesMeanNoDevices) {
    EXPECT_TRUE(parse_device_list("")->empty());
    EXPECT_TRUE(parse_device_list("  ")->empty());
    EXPECT_TRUE(parse_device_list("NoDevFiles")->empty());
}

TEST(DeviceList, UuidsAndMig) {
    auto r = parse_device_list(
        "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6,GPU-5e4f,MIG-GPU-8932f937-d72c-4106-c12f-"
        "20bd9faed9f6/1/0,MIG-9b3a6c41-9c3e-5d3f-8e8b-1f1c2b0a9d11");
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_EQ(r->size(), 4u);
    EXPECT_EQ((*r)[0].kind, DeviceIdKind::uuid);
    EXPECT_EQ((*r)[1].kind, DeviceIdKind::uuid);  // CUDA accepts unique prefixes
    EXPECT_EQ((*r)[2].kind, DeviceIdKind::mig);
    EXPECT_EQ((*r)[3].kind, DeviceIdKind::mig);
    EXPECT_EQ(gpu_uuid_of((*r)[0]), "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6");
    EXPECT_EQ(gpu_uuid_of((*r)[2]), "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6");
    EXPECT_EQ(gpu_uuid_of((*r)[3]), "");
}

TEST(DeviceList, RejectsMalformed) {
    for (const char* bad : {"0,,1", "0,", ",0", "-1", "1a", "0x1", "GPU-", "GPU-zz", "MIG-",
                            "MIG-GPU-abc", "MIG-GPU-abc/1", "MIG-GPU-abc/x/0", "65536", "gpu0"}) {
        auto r = parse_device_list(bad);
        EXPECT_FALSE(r.ok()) << bad;
        if (!r.ok()) {
            EXPECT_EQ(r.error().code, Errc::invalid_input) << bad;
            EXPECT_NE(r.error().message.find("CUDA_VISIBLE_DEVICES"), std::string::npos);
        }
    }
}

TEST(DeviceList, RejectsDuplicates) {
    auto r = parse_device_list("0,1,01");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("twice"), std::string::npos);
    EXPECT_FALSE(parse_device_list("GPU-abc,GPU-abc").ok());
}

TEST(DeviceList, Caps) {
    std::string big;
    for (int i = 0; i < 1100; ++i) big += (i ? "," : "") + std::to_string(i);
    auto r = parse_device_list(big);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, Errc::too_large);
    auto huge = parse_device_list(std::string(kMaxDeviceListChars + 1, '1'));
    ASSERT_FALSE(huge.ok());
    EXPECT_EQ(huge.error().code, Errc::too_large);
}

TEST(DeviceList, IndexListForSlurmGpus) {
    auto r = parse_index_list("2,3", "SLURM_STEP_GPUS");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(*r, (std::vector<int>{2, 3}));
    auto u = parse_index_list("GPU-abc", "SLURM_STEP_GPUS");
    ASSERT_FALSE(u.ok());
    EXPECT_NE(u.error().message.find("SLURM_STEP_GPUS"), std::string::npos);
}

TEST(DeviceList, FormatRoundTrip) {
    for (const char* s : {"0", "3,1,2", "GPU-abc,7", "MIG-GPU-ab/0/0"}) {
        auto r = parse_device_list(s);
        ASSERT_TRUE(r.ok()) << s;
        EXPECT_EQ(format_device_list(*r), s);
    }
}

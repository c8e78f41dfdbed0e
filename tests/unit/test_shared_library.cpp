// SPDX-License-Identifier: Apache-2.0
// SharedLibrary: the one dlopen helper of PMI2, PMIx, NCCL, the CUDA runtime and hwloc.
// Each test runs in a process of its own (ctest), so what one loads does not leak into another.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>

#include "os/shared_library.hpp"

using namespace sddp;

namespace {

const std::string kPmi2 = SDDP_TEST_FAKE_PMI2;  // a library with PMI2_* entry points
const std::string kPmix = SDDP_TEST_FAKE_PMIX;  // another one, not loaded by anything here

bool held(const std::string& path) {
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (h != nullptr) dlclose(h);
    return h != nullptr;
}

}  // namespace

TEST(SharedLibrary, LoadsTheFirstCandidateThatLoadsAndNamesItsFile) {
    auto lib = SharedLibrary::open({"libsddp-no-such-library.so.9", kPmi2});
    ASSERT_TRUE(lib) << lib.error().message;
    EXPECT_EQ(lib->path(), kPmi2);
    EXPECT_FALSE(lib->was_loaded());
    void (*init)() = nullptr;
    EXPECT_TRUE(lib->bind("PMI2_Init", init));
    EXPECT_NE(init, nullptr);
    std::string missing;
    EXPECT_EQ(lib->symbol("no_such_symbol", &missing), nullptr);
    EXPECT_EQ(missing, "no_such_symbol");
}

TEST(SharedLibrary, TheErrorNamesEveryCandidateAndWhy) {
    SharedLibrary::Options o;
    o.required = {"PMI2_Init", "no_such_symbol"};
    auto lib = SharedLibrary::open({"libsddp-no-such-library.so.9", kPmi2}, o);
    ASSERT_FALSE(lib);
    EXPECT_EQ(lib.error().code, Errc::unsupported);
    const std::string& m = lib.error().message;
    EXPECT_NE(m.find("libsddp-no-such-library.so.9 ("), std::string::npos) << m;
    EXPECT_NE(m.find("cannot open shared object file"), std::string::npos) << m;
    EXPECT_NE(m.find(kPmi2 + " (lacks no_such_symbol)"), std::string::npos) << m;
    // A local library that lacked an entry point is not left loaded.
    EXPECT_FALSE(held(kPmi2));
}

TEST(SharedLibrary, ACopyTheProcessHoldsWinsOverEarlierCandidates) {
    ASSERT_FALSE(held(kPmix));
    void* mine = dlopen(kPmi2.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(mine, nullptr) << dlerror();
    auto lib = SharedLibrary::open({kPmix, kPmi2});
    ASSERT_TRUE(lib) << lib.error().message;
    EXPECT_EQ(lib->path(), kPmi2);
    EXPECT_TRUE(lib->was_loaded());
    EXPECT_FALSE(held(kPmix)) << "a candidate was loaded although the process held another";
    EXPECT_TRUE(SharedLibrary::find_loaded({kPmix, kPmi2}).is_open());
    EXPECT_FALSE(SharedLibrary::find_loaded({kPmix}).is_open());
    dlclose(mine);
}

TEST(SharedLibrary, ClosesWhenDestroyedUnlessKept) {
    ASSERT_FALSE(held(kPmix));
    {
        auto lib = SharedLibrary::open({kPmix});
        ASSERT_TRUE(lib) << lib.error().message;
        EXPECT_TRUE(held(kPmix));
        SharedLibrary moved = std::move(*lib);
        EXPECT_FALSE(lib->is_open());
        EXPECT_TRUE(moved.is_open());
    }
    EXPECT_FALSE(held(kPmix));
    {
        auto lib = SharedLibrary::open({kPmix});
        ASSERT_TRUE(lib) << lib.error().message;
        lib->keep();
    }
    EXPECT_TRUE(held(kPmix));
}

// SPDX-License-Identifier: Apache-2.0
// library_candidates: where NCCL and the CUDA runtime are looked for when the process holds
// none: LD_LIBRARY_PATH, then the Python environment's NVIDIA wheels, then the loader's search.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "os/library_search.hpp"

using namespace sddp;
namespace fs = std::filesystem;

namespace {

class LibrarySearch : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/sddp-libsearch.XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        root_ = tmpl;
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(root_, ec);
    }
    std::string touch(const std::string& rel) {
        const fs::path p = fs::path(root_) / rel;
        fs::create_directories(p.parent_path());
        std::ofstream(p.string()) << "";
        return p.string();
    }
    std::string root_;
};

}  // namespace

TEST_F(LibrarySearch, LdLibraryPathThenTheVenvsWheelThenTheSoname) {
    const std::string wheel =
        touch("venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2");
    const std::string ld = touch("ld/libnccl.so.2");
    touch("empty/.keep");
    auto env = map_env({{"VIRTUAL_ENV", root_ + "/venv"},
                        {"LD_LIBRARY_PATH", root_ + "/empty::" + root_ + "/ld/"},
                        {"PATH", "/nonexistent"}});
    EXPECT_EQ(python_site_packages(env),
              (std::vector<std::string>{root_ + "/venv/lib/python3.12/site-packages"}));
    EXPECT_EQ(library_candidates(env, "libnccl.so.2", {"nvidia/nccl/lib"}),
              (std::vector<std::string>{ld, wheel, "libnccl.so.2"}));
}

TEST_F(LibrarySearch, ThePythonOnPathAndTheUsersSiteNameTheirEnvironments) {
    // A venv's bin/python3 (a link to the base interpreter elsewhere) names the venv.
    touch("env/bin/.keep");
    fs::create_symlink("/bin/sh", fs::path(root_) / "env/bin/python3");
    const std::string cu13 =
        touch("env/lib/python3.11/site-packages/nvidia/cu13/lib/libcudart.so.13");
    const std::string conda =
        touch("conda/lib/python3.10/site-packages/nvidia/cu13/lib/libcudart.so.13");
    const std::string user =
        touch("home/.local/lib/python3.12/site-packages/nvidia/cuda_runtime/lib/libcudart.so.13");
    auto env = map_env({{"CONDA_PREFIX", root_ + "/conda"},
                        {"PATH", "/nonexistent:" + root_ + "/env/bin"},
                        {"HOME", root_ + "/home"}});
    EXPECT_EQ(
        library_candidates(env, "libcudart.so.13", {"nvidia/cuda_runtime/lib", "nvidia/cu13/lib"}),
        (std::vector<std::string>{conda, cu13, user, "libcudart.so.13"}));
}

TEST_F(LibrarySearch, NothingFoundLeavesTheLoadersOwnSearch) {
    auto env = map_env({{"VIRTUAL_ENV", root_ + "/none"}, {"PATH", ""}, {"HOME", root_}});
    EXPECT_TRUE(python_site_packages(env).empty());
    EXPECT_EQ(library_candidates(env, "libnccl.so.2", {"nvidia/nccl/lib"}),
              (std::vector<std::string>{"libnccl.so.2"}));
}

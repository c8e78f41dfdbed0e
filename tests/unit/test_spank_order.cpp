// SPDX-License-Identifier: Apache-2.0
// spank_order: whether pyxis's hooks run after ours, from the objects in load order.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/slurm/spank_order.hpp"

using namespace sddp;

namespace {

constexpr const char* kSelf = "/usr/lib/x86_64-linux-gnu/slurm-wlm/spank_ddp.so";
constexpr const char* kPyxis = "/usr/local/lib/slurm/spank_pyxis.so";

std::vector<LoadedObject> objects(std::initializer_list<LoadedObject> list) {
    return list;
}

}  // namespace

TEST(SpankOrder, PyxisLoadedAfterUsIsFound) {
    const auto loaded = objects({{"/usr/sbin/slurmstepd", ""},
                                 {"/lib/x86_64-linux-gnu/libc.so.6", ""},
                                 {kSelf, "ddp"},
                                 {"/usr/lib/slurm/other.so", "other"},
                                 {kPyxis, "pyxis"}});
    EXPECT_EQ(plugin_loaded_after(loaded, kSelf, kPyxisPluginName), std::string(kPyxis));
}

TEST(SpankOrder, PyxisLoadedBeforeUsIsTheDocumentedOrder) {
    const auto loaded = objects({{kPyxis, "pyxis"}, {kSelf, "ddp"}, {"/x/other.so", "other"}});
    EXPECT_EQ(plugin_loaded_after(loaded, kSelf, kPyxisPluginName), std::nullopt);
}

TEST(SpankOrder, NoPyxisOrNoSelfMeansNothingToRefuse) {
    EXPECT_EQ(plugin_loaded_after(objects({{kSelf, "ddp"}, {"/x/other.so", "other"}}), kSelf,
                                  kPyxisPluginName),
              std::nullopt);
    // Our own path not among the objects (a renamed or re-linked plugin): never guess.
    EXPECT_EQ(plugin_loaded_after(objects({{kPyxis, "pyxis"}}), kSelf, kPyxisPluginName),
              std::nullopt);
}

TEST(SpankOrder, PyxisIsKnownByItsPluginNameNotItsFileName) {
    const auto loaded =
        objects({{kSelf, "ddp"}, {"/opt/nv/containers.so", "pyxis"}, {"/x/spank_pyxis.so", ""}});
    EXPECT_EQ(plugin_loaded_after(loaded, kSelf, kPyxisPluginName), "/opt/nv/containers.so");
}

TEST(SpankOrder, ContainerVariablesAreTheOnesSrunAndSbatchHandOn) {
    const auto& names = pyxis_container_variables();
    // Seen in slurmstepd's init hook on the test cluster for `srun --container-image=...`.
    for (const char* expected :
         {"_SLURM_SPANK_OPTION_pyxis_container_image", "_SLURM_SPANK_OPTION_pyxis_container_name",
          "SLURM_SPANK__SLURM_SPANK_OPTION_pyxis_container_image", "PYXIS_CONTAINER_IMAGE",
          "PYXIS_CONTAINER_NAME"}) {
        EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
    }
    // Options that do not start a container (mounts, env) are not among them.
    EXPECT_EQ(std::find(names.begin(), names.end(), "_SLURM_SPANK_OPTION_pyxis_container_mounts"),
              names.end());
}

TEST(SpankOrder, TheErrorIsOneLineNamingBothFilesAndTheFix) {
    const std::string e = pyxis_order_error(kSelf, kPyxis);
    EXPECT_EQ(e.find('\n'), std::string::npos);
    EXPECT_NE(e.find("spank_ddp.so is listed before spank_pyxis.so (" + std::string(kPyxis) + ")"),
              std::string::npos)
        << e;
    EXPECT_NE(e.find("MASTER_ADDR"), std::string::npos) << e;
    EXPECT_NE(e.find("list spank_ddp.so after spank_pyxis.so in plugstack.conf"), std::string::npos)
        << e;
}

// SPDX-License-Identifier: Apache-2.0
// The network hints: the peer a task reaches rank 0 through, and the interface that carries it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/task/launch_env.hpp"
#include "core/task/net_hints.hpp"
#include "step_vars.hpp"

using namespace sddp;
using namespace sddp::unit;

// ---- net hints -------------------------------------------------------------------------------

TEST(NetHints, PeerAndInterface) {
    auto f1 = facts_of(task(0, 0, 0, 2, "n[1-2]", 2, "1(x2)", "n1"));
    auto f2 = facts_of(task(1, 0, 1, 2, "n[1-2]", 2, "1(x2)", "n2"));
    auto e1 = derive_launch_env(f1, {}, {});
    auto e2 = derive_launch_env(f2, {}, {});
    EXPECT_EQ(net_hint_peer(f1, *e1), "n2");  // the master's node asks for another node
    EXPECT_EQ(net_hint_peer(f2, *e2), "n1");
    auto single = facts_of(task(0, 0, 0, 1, "n1", 1, "1", "n1"));
    EXPECT_FALSE(net_hint_peer(single, *derive_launch_env(single, {}, {})).has_value());

    const std::vector<InterfaceAddress> ifs{
        {"lo", "127.0.0.1", true}, {"eth0", "10.0.0.5", false}, {"ib0", "10.1.0.5", false}};
    EXPECT_EQ(interface_for_address(ifs, "10.0.0.5"), "eth0");
    EXPECT_EQ(interface_for_address(ifs, "10.1.0.5"), "ib0");
    EXPECT_FALSE(interface_for_address(ifs, "127.0.0.1").has_value());
    EXPECT_FALSE(interface_for_address(ifs, "10.9.9.9").has_value());
    auto g = gloo_hint_env(std::string("eth0"));
    ASSERT_EQ(g.size(), 1u);
    EXPECT_EQ(g[0].name, "GLOO_SOCKET_IFNAME");
    EXPECT_TRUE(g[0].keep_existing);
}

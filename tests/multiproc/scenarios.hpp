// SPDX-License-Identifier: Apache-2.0
// Rendezvous scenarios, one ctest test each. A scenario returns the number of failed checks.
#pragma once

#include <string>
#include <vector>

namespace sddp::mp {

struct Scenario {
    std::string name;
    int (*run)();
};

std::vector<Scenario> normal_scenarios();    // scenarios_normal.cpp
std::vector<Scenario> intruder_scenarios();  // scenarios_intruders.cpp: bogus peers, real job ok
std::vector<Scenario> failure_scenarios();   // scenarios_failures.cpp: ranks die, abort, ...
std::vector<Scenario> attack_scenarios();    // scenarios_attacks.cpp: floods, squatters, ...
std::vector<Scenario> tree_scenarios();      // scenarios_tree.cpp: the node leaders' k-ary tree

}  // namespace sddp::mp

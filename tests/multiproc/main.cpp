// SPDX-License-Identifier: Apache-2.0
// Driver: `rdv_multiproc <scenario>` runs one scenario; `rdv_multiproc --list` names them all.
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "os/process_env.hpp"
#include "os/stderr_log.hpp"
#include "scenarios.hpp"

int main(int argc, char** argv) {
    using namespace sddp::mp;
    sddp::use_stderr_log(sddp::process_env());
    std::vector<Scenario> all = normal_scenarios();
    for (auto* more :
         {&intruder_scenarios, &failure_scenarios, &attack_scenarios, &tree_scenarios}) {
        for (Scenario& s : more()) all.push_back(s);
    }
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s <scenario> | --list\n", argv[0]);
        return 2;
    }
    if (std::strcmp(argv[1], "--list") == 0) {
        for (const Scenario& s : all) std::printf("%s\n", s.name.c_str());
        return 0;
    }
    // The transport must survive writes to dead peers on its own (MSG_NOSIGNAL): keep SIGPIPE
    // at its default, fatal disposition so a regression kills the test.
    ::signal(SIGPIPE, SIG_DFL);
    for (const Scenario& s : all) {
        if (s.name != argv[1]) continue;
        const auto start = std::chrono::steady_clock::now();
        const int failures = s.run();
        const double secs =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::printf("%s: %s in %.2f s\n", s.name.c_str(), failures == 0 ? "PASS" : "FAIL", secs);
        return failures == 0 ? 0 : 1;
    }
    std::fprintf(stderr, "unknown scenario '%s'\n", argv[1]);
    return 2;
}

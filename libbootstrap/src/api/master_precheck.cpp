// SPDX-License-Identifier: Apache-2.0
#include "api/master_precheck.hpp"

#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdio>
#include <thread>
#include <vector>

#include "core/check/check_verdict.hpp"
#include "rendezvous/tcp/socket.hpp"

namespace sddp::api {
namespace {

std::string numeric_host(const tcp::SocketAddress& a) {
    char buf[NI_MAXHOST] = {};
    if (::getnameinfo(reinterpret_cast<const sockaddr*>(&a.addr), a.len, buf, sizeof buf, nullptr,
                      0, NI_NUMERICHOST) != 0) {
        return a.text;
    }
    return buf;
}

}  // namespace

Status check_master_address(const Identity& id, const std::string& host,
                            std::chrono::milliseconds timeout) {
    if (!id.locality_known || !id.node_rank || *id.node_rank == 0 || !id.num_nodes ||
        *id.num_nodes < 2 || !id.master_addr || id.master_addr->empty()) {
        return ok_status();
    }
    using tcp::Clock;
    const auto start = Clock::now();
    const auto grace =
        start + std::min<std::chrono::milliseconds>(timeout, std::chrono::seconds(3));
    std::string why;
    for (;;) {
        auto r = tcp::resolve_tcp(*id.master_addr, id.master_port.value_or(0), start + timeout);
        if (r) {
            std::vector<std::string> addresses;
            for (const auto& a : *r) addresses.push_back(numeric_host(a));
            SDDP_TRY(warning, judge_master_address(*id.master_addr, addresses, "", host));
            if (!warning.empty()) {
                (void)std::fprintf(stderr, "slurm-ddp: warning: rank %u: %s\n",
                                   static_cast<unsigned>(id.rank), warning.c_str());
            }
            return ok_status();
        }
        why = r.error().message;
        if (r.error().code == Errc::timeout || Clock::now() >= grace) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return judge_master_address(*id.master_addr, {}, why, host).error();
}

}  // namespace sddp::api

// SPDX-License-Identifier: Apache-2.0
// local_address_towards (--ddp=net-hints): the name look-up inside task_init is bounded.
#include <gtest/gtest.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "os/route_probe.hpp"

using namespace sddp;

TEST(RouteProbe, NumericAndLocalNamesResolve) {
    EXPECT_TRUE(local_address_towards("127.0.0.1").has_value());
    EXPECT_TRUE(local_address_towards("localhost").has_value());
    EXPECT_FALSE(local_address_towards("").has_value());
}

namespace {

// In the child: a network namespace whose only DNS server (127.0.0.1:53) takes queries and
// never answers, as a dead or firewalled server does. Exit status: 77 where that cannot be set up.
[[noreturn]] void child_with_silent_dns(std::chrono::milliseconds timeout) {
    if (::unshare(CLONE_NEWNS | CLONE_NEWNET) != 0) ::_exit(77);
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) ::_exit(77);
    const int s = ::socket(AF_INET, SOCK_DGRAM, 0);
    ifreq ifr{};
    std::strcpy(ifr.ifr_name, "lo");
    if (::ioctl(s, SIOCGIFFLAGS, &ifr) != 0) ::_exit(77);
    ifr.ifr_flags |= IFF_UP;
    if (::ioctl(s, SIOCSIFFLAGS, &ifr) != 0) ::_exit(77);
    const int dns = ::socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(53);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(dns, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) ::_exit(77);
    char conf[] = "/tmp/sddp-resolv.XXXXXX";
    const int fd = ::mkstemp(conf);
    const char text[] = "nameserver 127.0.0.1\n";
    if (fd < 0 || ::write(fd, text, sizeof text - 1) != static_cast<ssize_t>(sizeof text - 1))
        ::_exit(77);
    ::close(fd);
    const bool mounted = ::mount(conf, "/etc/resolv.conf", nullptr, MS_BIND, nullptr) == 0;
    ::unlink(conf);
    if (!mounted) ::_exit(77);

    const auto start = std::chrono::steady_clock::now();
    const auto addr = local_address_towards("peer.sddp-test.invalid", timeout);
    const auto took = std::chrono::steady_clock::now() - start;
    if (addr) ::_exit(3);
    ::_exit(took < timeout + std::chrono::milliseconds(700) ? 0 : 4);
}

}  // namespace

TEST(RouteProbe, SilentDnsServerCostsTheTimeoutOnly) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root for a private network namespace";
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) child_with_silent_dns(std::chrono::milliseconds(300));
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    if (WEXITSTATUS(status) == 77) GTEST_SKIP() << "cannot make a network namespace here";
    EXPECT_EQ(WEXITSTATUS(status), 0)
        << "3: an address from a server that never answers; 4: the look-up outlasted its "
           "timeout (the resolver's own retries take 10 s and more)";
}

// SPDX-License-Identifier: Apache-2.0
// A small fork-based harness for rendezvous scenarios: each rank is a child process, results
// come back through a shared memory slot per process, and the parent enforces a hard time limit
// (killing and reaping every child) so no scenario can hang or leak processes.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/base/result.hpp"
#include "rendezvous/transport.hpp"

namespace sddp::mp {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// What one child reports. `code` is 0 on success, else an Errc value.
struct Report {
    int code = -1;  // -1: the child never reported (crashed or killed)
    double seconds = 0;
    std::string message;
};

const char* errc_name(int code);

// A free TCP port: bind port 0, read it back, close. Good enough for tests run one at a time.
std::uint16_t free_port();

// Common configuration for `world` ranks spread over `nodes` "nodes" on 127.0.0.1, block
// distribution (nodes == world means no local information: every rank talks TCP to rank 0).
struct Job {
    int world = 1;
    int nodes = 1;
    std::uint16_t port = 0;
    std::string secret;
    std::string step_tag;
    milliseconds timeout{5000};
    // > 0: the node leaders form a tree of this fanout; node n's leader listens on
    // leader_ports[n] of 127.0.0.1 (node 0's is `port`), so many "nodes" share one host.
    int fanout = 0;
    std::vector<std::uint16_t> leader_ports;
    RendezvousConfig config(int rank) const;
};
Job make_job(const std::string& name, int world, int nodes, milliseconds timeout);
Job make_tree_job(const std::string& name, int world, int nodes, int fanout, milliseconds timeout);

// Child processes with result slots.
class Children {
  public:
    explicit Children(std::size_t max_children);
    ~Children();
    // Runs `body` in a child; its returned Report lands in the slot. Returns the slot index.
    std::size_t spawn(const std::string& label, std::function<Report()> body);
    // Waits for every child up to `limit`; stragglers are SIGKILLed. Returns false on a hang.
    bool wait_all(milliseconds limit);
    const Report& report(std::size_t i) const { return reports_[i]; }
    const std::string& label(std::size_t i) const { return labels_[i]; }
    std::size_t size() const { return pids_.size(); }
    // Sends SIGKILL to one child (to simulate a crash from outside).
    void kill(std::size_t i);

  private:
    void* shm_ = nullptr;
    std::size_t max_ = 0;
    std::vector<pid_t> pids_;
    std::vector<std::string> labels_;
    std::vector<Report> reports_;
};

// Deterministic pseudo-random bytes so every rank can check what it received.
Bytes pattern(std::uint64_t seed, std::size_t len);

// The standard workload: `rounds` x (broadcast from 0, allgather, gather, barrier, broadcast
// from the last rank), every result checked. `before_round` lets a fault scenario misbehave; a
// report it returns ends the rank with that report.
Report run_rank(
    const RendezvousConfig& cfg, int rounds,
    const std::function<std::optional<Report>(Transport&, int round)>& before_round = {});
Report report_error(const Error& e, Clock::time_point start);

// Expectation checks, printing what went wrong.
struct Checker {
    std::string scenario;
    int failures = 0;
    void expect(bool cond, const std::string& what);
    void expect_ok(const Children& c, std::size_t i);
    void expect_error(const Children& c, std::size_t i, Errc code,
                      const std::vector<std::string>& contains);
    void expect_under(const Children& c, std::size_t i, double seconds);
};

// Raw sockets for misbehaving clients.
int connect_raw(std::uint16_t port, milliseconds patience);
// Reads until EOF or `limit`; returns the bytes and whether EOF came.
std::pair<std::string, bool> read_until_eof(int fd, milliseconds limit);
void sleep_ms(int ms);
// A non-blocking connect from `source` (an address on lo other than 127.0.0.1: another "host").
int start_connect(const char* source, std::uint16_t port);
// A listening TCP socket on 127.0.0.1:port (SO_REUSEADDR), or -1.
int listen_on(std::uint16_t port);
// Connects to a node leader's abstract socket `name` (what /proc/net/unix shows any local user).
int connect_abstract(const std::string& name, milliseconds patience);

}  // namespace sddp::mp

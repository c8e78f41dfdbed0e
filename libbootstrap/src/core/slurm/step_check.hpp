// SPDX-License-Identifier: Apache-2.0
// `slurm-ddp check`: what each rank saw of its node, and the verdict on the whole step.
//
// Why: a multi-node trainer that hangs in init_process_group is usually stuck on something each
// task can see in a millisecond (its host name resolves to 127.0.1.1, MASTER_ADDR does not
// resolve or resolves elsewhere, rank 0's port is taken, two ranks share a GPU). Each rank
// gathers a CheckRecord by I/O (tools/check_facts), the records are exchanged through the
// library's rendezvous, and every rank judges them with the same pure functions here, so every
// rank reaches the same verdict and rank 0 prints it. Nothing here does I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/base/result.hpp"

namespace sddp {

// What one rank saw. Strings are empty where there is nothing to say; *_error says why a fact
// could not be learnt (and is itself a problem where it matters).
struct CheckRecord {
    std::uint32_t rank = 0;
    std::uint32_t world_size = 1;
    std::int32_t node_rank = -1;  // -1: the launcher did not say
    std::string host;
    std::string host_address;  // first address this node's own name resolves to
    std::string host_error;
    std::string master_addr;  // MASTER_ADDR as given (TCP rendezvous); empty under PMI2
    std::uint32_t master_port = 0;
    std::string master_address;  // what MASTER_ADDR resolves to here
    std::string master_error;
    std::string interface;  // interface whose address the route to MASTER_ADDR leaves from
    std::string interface_error;
    std::string port_error;  // rank 0 only: MASTER_PORT cannot be listened on
    std::string gpu;         // "none", or e.g. "1 (/dev/nvidia1)": the device this rank would use
    std::string gpu_key;     // identifies that device on its host (device file or bus id)
    std::string gpu_error;
    std::string versions;  // library and driver versions, compared across ranks
    // Boot id + network namespace: equal for "nodes" that share one host's network stack (a test
    // cluster, several slurmd on one machine), where loopback does reach rank 0. Empty: unknown.
    std::string network;
    bool operator==(const CheckRecord&) const = default;
};

// Fixed size, because the library's allgather takes one length for every rank. Long fields are
// cut to fit (they are for people to read); decode refuses anything that is not a record.
inline constexpr std::size_t kCheckRecordBytes = 2048;
std::vector<std::uint8_t> encode_check_record(const CheckRecord& r);
Result<CheckRecord> decode_check_record(std::span<const std::uint8_t> bytes);

// One problem: who (a node or a rank), what was seen, and what to do about it.
struct CheckProblem {
    std::string where;  // "node n2", "rank 3 on n1", "ranks 0 and 1 on n1"
    std::string seen;
    std::string fix;
    std::vector<std::uint32_t> ranks;  // the ranks it concerns (their table rows say FAIL)
    std::string line() const { return where + ": " + seen + "; fix: " + fix; }
    bool operator==(const CheckProblem&) const = default;
};

bool is_loopback_address(const std::string& address);

// The library's own cheap check before a TCP rendezvous, for a rank the launcher placed on
// another node than rank 0 (node_rank > 0 of a multi-node step). A MASTER_ADDR that does not
// resolve is an error: the rank would wait out the whole timeout. One that resolves to loopback
// only gives a warning (the value): wrong on real nodes, but "nodes" that share one host's
// network (a test cluster, several slurmd on one machine) reach rank 0 that way.
Result<std::string> judge_master_address(const std::string& master_addr,
                                         const std::vector<std::string>& addresses,
                                         const std::string& resolve_error, const std::string& host);

// What one rank can tell from its own record alone: used when the exchange itself failed, so
// each task still says what is wrong where it runs. `multi_node`: the step spans nodes.
std::vector<CheckProblem> local_problems(const CheckRecord& r, bool multi_node);

// Every problem of the step from all records (all[i] is rank i's): the local ones (once per
// node for node-wide facts) and those only the whole step shows (two ranks on one GPU,
// MASTER_ADDR resolving differently on different nodes, different versions).
std::vector<CheckProblem> judge_step(const std::vector<CheckRecord>& all);

// The table rank 0 prints: rank, host, MASTER_ADDR and what it resolved to, interface, GPU,
// verdict; then one line per problem and the one-line verdict.
std::string format_check_report(const std::vector<CheckRecord>& all,
                                const std::vector<CheckProblem>& problems);
std::string format_check_json(const std::vector<CheckRecord>& all,
                              const std::vector<CheckProblem>& problems,
                              const std::optional<std::string>& exchange_error);
std::string verdict_line(std::size_t ranks, const std::vector<CheckProblem>& problems);
std::string json_quote(const std::string& s);

// A dead or cut-off node never sends a record; the rendezvous names its ranks instead
// ("... missing ranks 1,3-5 ..."). These name the nodes: the ranks in such a message (empty when
// it names none), and one problem per node of the step that holds some of them.
std::vector<std::uint32_t> missing_ranks_in(const std::string& message);
std::vector<CheckProblem> missing_node_problems(
    const std::vector<std::uint32_t>& missing, const std::vector<std::string>& nodes,
    const std::vector<std::vector<std::uint32_t>>& ranks_per_node, const std::string& rank0_host,
    std::uint32_t timeout_s);

}  // namespace sddp

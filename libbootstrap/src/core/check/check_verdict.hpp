// SPDX-License-Identifier: Apache-2.0
// `slurm-ddp check`'s verdict on the whole step, from every rank's CheckRecord.
//
// Why: a multi-node trainer that hangs in init_process_group is usually stuck on something each
// task can see in a millisecond (its host name resolves to 127.0.1.1, MASTER_ADDR does not
// resolve or resolves elsewhere, rank 0's port is taken, two ranks share a GPU). Every rank judges
// the exchanged records with the same pure functions here, so every rank reaches the same verdict
// and rank 0 prints it (check_report.hpp). Nothing here does I/O.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/result.hpp"
#include "core/check/check_record.hpp"

namespace sddp {

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

// A dead or cut-off node never sends a record; the rendezvous names its ranks instead
// ("... missing ranks 1,3-5 ..."). These name the nodes: the ranks in such a message (empty when
// it names none), and one problem per node of the step that holds some of them.
std::vector<std::uint32_t> missing_ranks_in(const std::string& message);
std::vector<CheckProblem> missing_node_problems(
    const std::vector<std::uint32_t>& missing, const std::vector<std::string>& nodes,
    const std::vector<std::vector<std::uint32_t>>& ranks_per_node, const std::string& rank0_host,
    std::uint32_t timeout_s);

}  // namespace sddp

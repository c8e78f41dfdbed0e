// SPDX-License-Identifier: Apache-2.0
// Slurm host lists ("node[01-04,07],login1"), expanded and compressed without libslurm.
//
// The plugin needs the step's node names (for MASTER_ADDR and node-local ranks) in places where
// linking libslurm is not an option, so this is a from-scratch parser of the syntax Slurm >= 23.02
// accepts. It is stricter than Slurm where Slurm silently produces garbage (unbalanced brackets,
// empty elements, whitespace inside brackets, numbers beyond 64 bits); every rejection is an Error
// that quotes the offending text and shows the valid syntax.
//
// Untrusted input must not be able to make us allocate without bound: the host count of a list is
// computed from its ranges before anything is expanded, and compared with a cap.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/result.hpp"

namespace sddp {

// Cap vs absurd input like a[0-999999999].
inline constexpr std::size_t kMaxHostlistHosts = 1u << 20;
// One expanded host name. DNS names stop at 253; anything longer is not a node name.
inline constexpr std::size_t kMaxHostNameLength = 255;

// Expands `list` in Slurm's order (see hostlist.cpp for the order of several bracket groups).
// Duplicates are kept. Errc::invalid_input on malformed or empty lists, Errc::too_large when the
// list names more than `max_hosts` hosts.
Result<std::vector<std::string>> expand_hostlist(std::string_view list,
                                                 std::size_t max_hosts = kMaxHostlistHosts);

// First host without expanding the whole list (used for MASTER_ADDR on huge steps). The whole
// list is still validated, so this fails exactly when expand_hostlist would fail for a reason
// other than the cap.
Result<std::string> first_hostlist_host(std::string_view list);

// Inverse of expand_hostlist: order is preserved, adjacent hosts that differ only in a trailing
// number of equal padding become ranges, e.g. {n1,n2,n3,n7} -> "n[1-3,7]". Only trailing numbers
// are bracketed, so the output is also valid for Slurm releases without suffix support.
// expand_hostlist(compress_hostlist(x)) == x for every non-empty vector of host names that
// expand_hostlist can produce (1..kMaxHostNameLength printable ASCII characters other than
// whitespace, ',', '[' and ']'). An empty vector gives "", which expand_hostlist rejects.
std::string compress_hostlist(const std::vector<std::string>& hosts);

}  // namespace sddp

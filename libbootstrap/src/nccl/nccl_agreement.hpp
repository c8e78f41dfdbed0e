// SPDX-License-Identifier: Apache-2.0
// Every rank's outcome of a step of NCCL setup, exchanged over the rendezvous, so that all ranks
// return the same verdict and name the rank that failed first.
//
// Why: NCCL reports a failure only to the rank that had it; its peers wait in ncclCommInitRank
// (or its polling) until their own deadline and then report a timeout that names nobody. So the
// layer agrees twice: before init (is every rank's device set up?), so that one rank's bad device
// makes every rank stop at once without touching NCCL; and after init and the splits, so that
// every rank returns the failing rank's reason rather than its own timeout.
#pragma once

#include <string>
#include <vector>

#include "core/base/bytes.hpp"
#include "core/base/result.hpp"
#include "rendezvous/transport.hpp"

namespace sddp::nccl {

// Pure: one rank's outcome as the bytes it contributes.
Bytes encode_outcome(const Status& mine, const std::string& host);

// Pure: the verdict from every rank's outcome (all[i] is rank i's). OK when every rank succeeded;
// otherwise the error of the lowest rank that failed other than by a timeout (a rank that timed
// out was most likely waiting for that one), else of the lowest rank that failed, as
// "<stage> failed on rank R (host H): <its message>", with its error code.
Status judge_outcomes(const std::vector<Bytes>& all, const std::string& stage);

// Allgathers this rank's outcome and returns the verdict (bounded by the transport's timeout);
// on a failure, a barrier follows, so that every rank has the verdict before any aborts.
// When the exchange itself fails, this rank's own failure if it had one, else the exchange's.
Status agree(Transport& t, const Status& mine, const std::string& stage, const std::string& host);

}  // namespace sddp::nccl

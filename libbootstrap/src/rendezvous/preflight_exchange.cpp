// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/preflight_exchange.hpp"

#include <string>
#include <utility>

namespace sddp {
namespace {

Result<std::vector<PreflightRecord>> decode_all(const std::vector<Bytes>& all) {
    std::vector<PreflightRecord> records;
    records.reserve(all.size());
    for (std::size_t i = 0; i < all.size(); ++i) {
        auto rec = decode_preflight(all[i]);
        if (!rec) {
            return make_error(rec.error().code,
                              "from rank " + std::to_string(i) + ": " + rec.error().message);
        }
        records.push_back(std::move(*rec));
    }
    return records;
}

}  // namespace

Result<PreflightOutcome> run_preflight(Transport& t, const PreflightRecord& mine,
                                       bool want_layout) {
    PreflightOutcome out;
    if (want_layout) {
        SDDP_TRY(all, t.allgather(encode_preflight(mine)));
        SDDP_TRY(records, decode_all(all));
        out.verdict = check_preflight(records, mine);
        out.layout = node_layout_from_hosts(records);
        return out;
    }
    SDDP_TRY(all, t.gather(encode_preflight(mine)));
    Bytes verdict;
    if (t.rank() == 0) {
        auto records = decode_all(all);
        verdict =
            encode_verdict(records ? check_preflight(*records, mine) : Status(records.error()));
    }
    SDDP_CHECK(t.broadcast(verdict, 0));
    out.verdict = decode_verdict(verdict);
    return out;
}

}  // namespace sddp

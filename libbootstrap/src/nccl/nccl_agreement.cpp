// SPDX-License-Identifier: Apache-2.0
#include "nccl/nccl_agreement.hpp"

#include <cstdint>
#include <optional>

namespace sddp::nccl {
namespace {

// One record: [ok 0|1][errc][host length][host][message]; lengths fit in a byte or the rest.
struct Outcome {
    bool ok = true;
    Errc code = Errc::internal;
    std::string host;
    std::string message;
};

std::optional<Outcome> decode(const Bytes& b) {
    if (b.size() < 3 || b[0] > 1) return std::nullopt;
    Outcome o;
    o.ok = b[0] == 0;
    o.code = static_cast<Errc>(b[1]);
    const std::size_t hl = b[2];
    if (b.size() < 3 + hl) return std::nullopt;
    o.host.assign(b.begin() + 3, b.begin() + 3 + static_cast<std::ptrdiff_t>(hl));
    o.message.assign(b.begin() + 3 + static_cast<std::ptrdiff_t>(hl), b.end());
    return o;
}

}  // namespace

Bytes encode_outcome(const Status& mine, const std::string& host) {
    const std::string h = host.substr(0, 255);
    Bytes b{static_cast<std::uint8_t>(mine ? 0 : 1),
            static_cast<std::uint8_t>(mine ? 0 : static_cast<int>(mine.error().code)),
            static_cast<std::uint8_t>(h.size())};
    b.insert(b.end(), h.begin(), h.end());
    if (!mine) {
        // Long enough for NCCL's last error; the rendezvous carries small records.
        const std::string m = mine.error().message.substr(0, 1500);
        b.insert(b.end(), m.begin(), m.end());
    }
    return b;
}

Status judge_outcomes(const std::vector<Bytes>& all, const std::string& stage) {
    std::optional<std::size_t> first, first_not_timeout;
    std::vector<Outcome> outs(all.size());
    std::size_t failed = 0;
    for (std::size_t i = 0; i < all.size(); ++i) {
        auto o = decode(all[i]);
        if (!o) {
            return make_error(Errc::protocol, stage + ": rank " + std::to_string(i) +
                                                  " sent an outcome that is not one (a damaged "
                                                  "rendezvous message)");
        }
        outs[i] = std::move(*o);
        if (outs[i].ok) continue;
        ++failed;
        if (!first) first = i;
        if (!first_not_timeout && outs[i].code != Errc::timeout) first_not_timeout = i;
    }
    if (!first) return ok_status();
    const std::size_t r = first_not_timeout.value_or(*first);
    std::string others;
    if (failed > 1) others = " (" + std::to_string(failed - 1) + " other rank(s) failed too)";
    return make_error(outs[r].code, stage + " failed on rank " + std::to_string(r) + " (host " +
                                        outs[r].host + "): " + outs[r].message + others);
}

Status agree(Transport& t, const Status& mine, const std::string& stage, const std::string& host) {
    auto all = t.allgather(encode_outcome(mine, host));
    if (!all) {
        if (!mine) return mine;
        return make_error(
            all.error().code,
            stage + ": exchanging the outcome with the other ranks failed: " + all.error().message);
    }
    Status verdict = judge_outcomes(*all, stage);
    // A failed step is followed by an abort of the rendezvous (the caller tells its peers), which
    // may reach a rank before the allgather's result does: no rank leaves before every rank
    // holds the verdict. (The barrier's own failure changes nothing: the verdict is known.)
    if (!verdict) (void)t.barrier();
    return verdict;
}

}  // namespace sddp::nccl

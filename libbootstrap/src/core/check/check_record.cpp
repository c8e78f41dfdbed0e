// SPDX-License-Identifier: Apache-2.0
#include "core/check/check_record.hpp"

#include <algorithm>
#include <cstdint>

#include "core/base/field_codec.hpp"

namespace sddp {
namespace {

constexpr std::uint8_t kCheckVersion = 1;
// Per field: an address, a host name or one error message fits; the record stays under
// kCheckRecordBytes with every field at its cap (14 strings * (4 + 140) + 5 numbers).
constexpr std::size_t kMaxCheckField = 140;
static_assert(std::size_t{14} * (4 + kMaxCheckField) + std::size_t{5} * 4 <= kCheckRecordBytes);

}  // namespace

std::vector<std::uint8_t> encode_check_record(const CheckRecord& r) {
    FieldWriter w(kCheckRecordBytes);
    w.u32(kCheckVersion);
    w.u32(r.rank);
    w.u32(r.world_size);
    w.u32(static_cast<std::uint32_t>(r.node_rank));
    w.u32(r.master_port);
    for (const std::string* s :
         {&r.host, &r.host_address, &r.host_error, &r.master_addr, &r.master_address,
          &r.master_error, &r.interface, &r.interface_error, &r.port_error, &r.gpu, &r.gpu_key,
          &r.gpu_error, &r.versions, &r.network}) {
        w.str32(*s, kMaxCheckField);
    }
    Bytes out = std::move(w).take();
    out.resize(kCheckRecordBytes, 0);
    return out;
}

Result<CheckRecord> decode_check_record(std::span<const std::uint8_t> bytes) {
    FieldReader in(bytes, "check record");
    CheckRecord r;
    const std::uint32_t version = in.u32("version");
    if (!in.ok() || version != kCheckVersion) {
        return make_error(Errc::protocol, "a check record has version " + std::to_string(version) +
                                              ", not " + std::to_string(kCheckVersion) +
                                              ": run the same slurm-ddp release on every node");
    }
    r.rank = in.u32("rank");
    r.world_size = in.u32("world size");
    r.node_rank = static_cast<std::int32_t>(in.u32("node rank"));
    r.master_port = in.u32("master port");
    for (std::string* s :
         {&r.host, &r.host_address, &r.host_error, &r.master_addr, &r.master_address,
          &r.master_error, &r.interface, &r.interface_error, &r.port_error, &r.gpu, &r.gpu_key,
          &r.gpu_error, &r.versions, &r.network}) {
        *s = in.str32(kMaxCheckField, "text");
    }
    // The rest is padding: zeros only, or this is not a record of ours.
    const std::span<const std::uint8_t> padding = in.take(in.remaining(), "padding");
    const bool zeros =
        std::all_of(padding.begin(), padding.end(), [](std::uint8_t c) { return c == 0; });
    if (!in.finish().ok() || !zeros || bytes.size() != kCheckRecordBytes) {
        return make_error(Errc::protocol, "a check record of " + std::to_string(bytes.size()) +
                                              " bytes is malformed");
    }
    return r;
}

}  // namespace sddp

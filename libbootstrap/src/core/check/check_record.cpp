// SPDX-License-Identifier: Apache-2.0
#include "core/check/check_record.hpp"

#include <algorithm>
#include <cstdint>

#include "core/base/bytes.hpp"

namespace sddp {
namespace {

constexpr std::uint8_t kCheckVersion = 1;
// Per field: an address, a host name or one error message fits; the record stays under
// kCheckRecordBytes with every field at its cap (14 strings * (4 + 140) + 5 numbers).
constexpr std::size_t kMaxCheckField = 140;
static_assert(std::size_t{14} * (4 + kMaxCheckField) + std::size_t{5} * 4 <= kCheckRecordBytes);

void put_str(Bytes& out, std::string_view s) {
    s = s.substr(0, kMaxCheckField);
    put_be32(out, static_cast<std::uint32_t>(s.size()));
    out.insert(out.end(), s.begin(), s.end());
}

// The record's fields over core's reader: a length-prefixed string never longer than a field.
class Reader {
  public:
    explicit Reader(std::span<const std::uint8_t> b) : in_(b) {}
    bool u32(std::uint32_t& v) {
        auto got = in_.u32();
        if (got) v = *got;
        return got.has_value();
    }
    bool str(std::string& s) {
        std::uint32_t n = 0;
        if (!u32(n) || n > kMaxCheckField) return false;
        auto bytes = in_.take(n);
        if (!bytes) return false;
        s.assign(bytes->begin(), bytes->end());
        return true;
    }
    // The rest is padding: zeros only, or this is not a record of ours.
    bool padding() {
        auto rest = in_.take(in_.remaining());
        return rest &&
               std::all_of(rest->begin(), rest->end(), [](std::uint8_t c) { return c == 0; });
    }

  private:
    BigEndianReader in_;
};

}  // namespace

std::vector<std::uint8_t> encode_check_record(const CheckRecord& r) {
    Bytes out;
    out.reserve(kCheckRecordBytes);
    put_be32(out, kCheckVersion);
    put_be32(out, r.rank);
    put_be32(out, r.world_size);
    put_be32(out, static_cast<std::uint32_t>(r.node_rank));
    put_be32(out, r.master_port);
    for (const std::string* s :
         {&r.host, &r.host_address, &r.host_error, &r.master_addr, &r.master_address,
          &r.master_error, &r.interface, &r.interface_error, &r.port_error, &r.gpu, &r.gpu_key,
          &r.gpu_error, &r.versions, &r.network}) {
        put_str(out, *s);
    }
    out.resize(kCheckRecordBytes, 0);
    return out;
}

Result<CheckRecord> decode_check_record(std::span<const std::uint8_t> bytes) {
    Reader in(bytes);
    CheckRecord r;
    std::uint32_t version = 0;
    std::uint32_t node_rank = 0;
    if (!in.u32(version) || version != kCheckVersion) {
        return make_error(Errc::protocol, "a check record has version " + std::to_string(version) +
                                              ", not " + std::to_string(kCheckVersion) +
                                              ": run the same slurm-ddp release on every node");
    }
    bool good =
        in.u32(r.rank) && in.u32(r.world_size) && in.u32(node_rank) && in.u32(r.master_port);
    for (std::string* s :
         {&r.host, &r.host_address, &r.host_error, &r.master_addr, &r.master_address,
          &r.master_error, &r.interface, &r.interface_error, &r.port_error, &r.gpu, &r.gpu_key,
          &r.gpu_error, &r.versions, &r.network}) {
        good = good && in.str(*s);
    }
    if (!good || !in.padding() || bytes.size() != kCheckRecordBytes) {
        return make_error(Errc::protocol, "a check record of " + std::to_string(bytes.size()) +
                                              " bytes is malformed");
    }
    r.node_rank = static_cast<std::int32_t>(node_rank);
    return r;
}

}  // namespace sddp

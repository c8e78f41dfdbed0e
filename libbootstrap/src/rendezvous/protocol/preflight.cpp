// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/protocol/preflight.hpp"

#include <cstdint>
#include <map>
#include <utility>

#include "core/base/bytes.hpp"
#include "core/base/numbers.hpp"

namespace sddp {
namespace {

// Field caps: a record is a few hundred bytes; anything larger is not ours.
constexpr std::size_t kMaxField = 1024;
constexpr std::uint8_t kRecordVersion = 2;

void put_str(std::vector<std::uint8_t>& out, std::string_view s) {
    s = s.substr(0, kMaxField);
    put_be32(out, static_cast<std::uint32_t>(s.size()));
    out.insert(out.end(), s.begin(), s.end());
}

// The record's fields over the shared big-endian reader: a false return on any short read.
class Reader {
  public:
    explicit Reader(std::span<const std::uint8_t> b) : in_(b) {}
    bool u8(std::uint8_t& v) {
        auto b = in_.take(1);
        if (!b) return false;
        v = (*b)[0];
        return true;
    }
    bool u32(std::uint32_t& v) {
        auto x = in_.u32();
        if (!x) return false;
        v = *x;
        return true;
    }
    bool str(std::string& s) {
        std::uint32_t n = 0;
        if (!u32(n) || n > kMaxField) return false;
        auto b = in_.take(n);
        if (!b) return false;
        s.assign(b->begin(), b->end());
        return true;
    }
    bool done() const { return in_.remaining() == 0; }

  private:
    BigEndianReader in_;
};

std::string who(const PreflightRecord& r) {
    return "rank " + std::to_string(r.rank) + " on " + quote_value(r.host);
}

// "2.28.9" from 22809 (NCCL_VERSION's encoding from 2.9 on); "none" for 0.
std::string nccl_version_text(std::uint32_t code) {
    if (code == 0) return "none";
    return std::to_string(code / 10000) + "." + std::to_string(code % 10000 / 100) + "." +
           std::to_string(code % 100);
}

}  // namespace

std::vector<std::uint8_t> encode_preflight(const PreflightRecord& r) {
    std::vector<std::uint8_t> out;
    out.push_back(kRecordVersion);
    put_str(out, r.step_tag);
    put_be32(out, r.world_size);
    put_be32(out, r.rank);
    put_str(out, r.host);
    put_str(out, r.pci_bus_id);
    put_be32(out, static_cast<std::uint32_t>(r.cuda_device));
    put_str(out, r.error);
    put_be32(out, r.nccl_version);
    put_str(out, r.nccl_options);
    return out;
}

Result<PreflightRecord> decode_preflight(std::span<const std::uint8_t> bytes) {
    Reader in(bytes);
    PreflightRecord r;
    std::uint8_t version = 0;
    std::uint32_t device = 0;
    if (!in.u8(version) || version != kRecordVersion) {
        return make_error(Errc::protocol, "a preflight record has version " +
                                              std::to_string(version) + ", not " +
                                              std::to_string(kRecordVersion) +
                                              ": all ranks must use the same libbootstrap release");
    }
    if (!in.str(r.step_tag) || !in.u32(r.world_size) || !in.u32(r.rank) || !in.str(r.host) ||
        !in.str(r.pci_bus_id) || !in.u32(device) || !in.str(r.error) || !in.u32(r.nccl_version) ||
        !in.str(r.nccl_options) || !in.done()) {
        return make_error(Errc::protocol, "a preflight record of " + std::to_string(bytes.size()) +
                                              " bytes is malformed");
    }
    r.cuda_device = static_cast<std::int32_t>(device);
    return r;
}

Status check_preflight(const std::vector<PreflightRecord>& all, const PreflightRecord& mine) {
    if (all.size() != mine.world_size) {
        return make_error(Errc::invalid_input, "preflight: " + std::to_string(all.size()) +
                                                   " ranks answered, world size is " +
                                                   std::to_string(mine.world_size));
    }
    for (std::size_t i = 0; i < all.size(); ++i) {
        const auto& r = all[i];
        if (r.rank != i) {
            return make_error(Errc::invalid_input,
                              "preflight: the record in slot " + std::to_string(i) + " says " +
                                  who(r) +
                                  "; two processes claim one rank or the transport is "
                                  "confused: check that RANK is unique per task");
        }
        if (r.step_tag != mine.step_tag) {
            return make_error(Errc::invalid_input,
                              "preflight: " + who(r) + " belongs to step " +
                                  quote_value(r.step_tag) + " but rank " +
                                  std::to_string(mine.rank) + " belongs to step " +
                                  quote_value(mine.step_tag) +
                                  ": tasks of another srun reached this rendezvous (same "
                                  "MASTER_ADDR:MASTER_PORT?); give each step its own port");
        }
        if (r.world_size != mine.world_size) {
            return make_error(Errc::invalid_input,
                              "preflight: " + who(r) +
                                  " has WORLD_SIZE=" + std::to_string(r.world_size) + " but rank " +
                                  std::to_string(mine.rank) +
                                  " has WORLD_SIZE=" + std::to_string(mine.world_size) +
                                  ": every task must see the same world size; check how the "
                                  "variables were exported");
        }
    }
    for (const auto& r : all) {
        if (r.error.empty()) continue;
        return make_error(Errc::invalid_input,
                          "preflight: " + who(r) + " cannot continue: " + r.error);
    }
    const PreflightRecord& first = all.front();
    for (const auto& r : all) {
        if (r.nccl_version != first.nccl_version) {
            return make_error(Errc::invalid_input,
                              "preflight: " + who(first) + " loaded NCCL " +
                                  nccl_version_text(first.nccl_version) + " but " + who(r) +
                                  " loaded NCCL " + nccl_version_text(r.nccl_version) +
                                  ": ranks must use one NCCL (the same libnccl.so.2 on every "
                                  "node, or the same Python environment)");
        }
        if (r.nccl_options != first.nccl_options) {
            return make_error(Errc::invalid_input,
                              "preflight: " + who(first) + " asked for NCCL options " +
                                  quote_value(first.nccl_options) + " but " + who(r) + " for " +
                                  quote_value(r.nccl_options) +
                                  ": every rank must pass the same sddp_options (no_nccl, "
                                  "no_local_comm, nccl_unique_ids)");
        }
    }
    // Same host and bus id = one GPU. The first pair found is named: it is enough to act on.
    std::map<std::pair<std::string, std::string>, const PreflightRecord*> owner;
    for (const auto& r : all) {
        if (r.pci_bus_id.empty()) continue;
        auto [it, inserted] = owner.emplace(std::make_pair(r.host, r.pci_bus_id), &r);
        if (inserted) continue;
        const auto& holder = *it->second;
        return make_error(
            Errc::invalid_input,
            "preflight: ranks " + std::to_string(holder.rank) + " and " + std::to_string(r.rank) +
                " both use GPU " + r.pci_bus_id + " on host " + quote_value(r.host) +
                " (CUDA devices " + std::to_string(holder.cuda_device) + " and " +
                std::to_string(r.cuda_device) +
                "); NCCL would fail with \"Duplicate GPU detected\". Give each task its own GPU: "
                "srun --ddp=gpu-bind=local (or --gpus-per-task=1), or run fewer tasks per node "
                "(--ntasks-per-node = GPUs per node)");
    }
    return ok_status();
}

namespace {
constexpr std::uint8_t kVerdictVersion = 1;
constexpr std::size_t kMaxVerdictMessage = 4096;
}  // namespace

std::vector<std::uint8_t> encode_verdict(const Status& verdict) {
    std::vector<std::uint8_t> out;
    out.push_back(kVerdictVersion);
    const std::string_view message =
        verdict.ok() ? std::string_view() : std::string_view(verdict.error().message);
    put_be32(out, verdict.ok() ? 0 : static_cast<std::uint32_t>(verdict.error().code));
    const std::string_view capped = message.substr(0, kMaxVerdictMessage);
    put_be32(out, static_cast<std::uint32_t>(capped.size()));
    out.insert(out.end(), capped.begin(), capped.end());
    return out;
}

Status decode_verdict(std::span<const std::uint8_t> bytes) {
    auto malformed = [&] {
        return make_error(Errc::protocol, "rank 0's preflight verdict of " +
                                              std::to_string(bytes.size()) +
                                              " bytes is malformed: all ranks must use the same "
                                              "libbootstrap release");
    };
    if (bytes.size() < 9 || bytes[0] != kVerdictVersion) return malformed();
    Reader in(bytes.subspan(1));
    std::uint32_t code = 0, len = 0;
    if (!in.u32(code) || !in.u32(len)) return malformed();
    if (len > kMaxVerdictMessage || len != bytes.size() - 9) return malformed();
    if (code == 0) {
        if (len != 0) return malformed();
        return ok_status();
    }
    if (code < static_cast<std::uint32_t>(Errc::invalid_input) ||
        code > static_cast<std::uint32_t>(Errc::internal)) {
        return malformed();
    }
    return make_error(static_cast<Errc>(code), std::string(bytes.begin() + 9, bytes.end()));
}

NodeLayout node_layout_from_hosts(const std::vector<PreflightRecord>& all) {
    NodeLayout l;
    std::map<std::string, std::uint32_t> index;
    std::vector<std::uint32_t> count;
    l.node_of_rank.reserve(all.size());
    l.local_rank.reserve(all.size());
    for (const auto& r : all) {
        auto [it, inserted] = index.emplace(r.host, l.num_nodes);
        if (inserted) {
            ++l.num_nodes;
            count.push_back(0);
        }
        l.node_of_rank.push_back(it->second);
        l.local_rank.push_back(count[it->second]++);
    }
    for (auto n : l.node_of_rank) l.local_world_size.push_back(count[n]);
    return l;
}

}  // namespace sddp

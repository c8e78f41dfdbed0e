// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/protocol/preflight.hpp"

#include <cstdint>
#include <map>
#include <utility>

#include "core/base/field_codec.hpp"
#include "core/base/numbers.hpp"

namespace sddp {
namespace {

// Field caps: a record is a few hundred bytes; anything larger is not ours.
constexpr std::size_t kMaxField = 1024;
constexpr std::uint8_t kRecordVersion = 2;

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
    FieldWriter w;
    w.u8(kRecordVersion);
    w.str32(r.step_tag, kMaxField);
    w.u32(r.world_size);
    w.u32(r.rank);
    w.str32(r.host, kMaxField);
    w.str32(r.pci_bus_id, kMaxField);
    w.u32(static_cast<std::uint32_t>(r.cuda_device));
    w.str32(r.error, kMaxField);
    w.u32(r.nccl_version);
    w.str32(r.nccl_options, kMaxField);
    return std::move(w).take();
}

Result<PreflightRecord> decode_preflight(std::span<const std::uint8_t> bytes) {
    FieldReader in(bytes, "preflight record");
    PreflightRecord r;
    const std::uint8_t version = in.u8("version");
    if (!in.ok() || version != kRecordVersion) {
        return make_error(Errc::protocol, "a preflight record has version " +
                                              std::to_string(version) + ", not " +
                                              std::to_string(kRecordVersion) +
                                              ": all ranks must use the same libbootstrap release");
    }
    r.step_tag = in.str32(kMaxField, "step tag");
    r.world_size = in.u32("world size");
    r.rank = in.u32("rank");
    r.host = in.str32(kMaxField, "host");
    r.pci_bus_id = in.str32(kMaxField, "bus id");
    r.cuda_device = static_cast<std::int32_t>(in.u32("CUDA device"));
    r.error = in.str32(kMaxField, "error");
    r.nccl_version = in.u32("NCCL version");
    r.nccl_options = in.str32(kMaxField, "NCCL options");
    if (!in.finish().ok()) {
        return make_error(Errc::protocol, "a preflight record of " + std::to_string(bytes.size()) +
                                              " bytes is malformed");
    }
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
    FieldWriter w;
    w.u8(kVerdictVersion);
    w.u32(verdict.ok() ? 0 : static_cast<std::uint32_t>(verdict.error().code));
    w.str32(verdict.ok() ? std::string_view() : std::string_view(verdict.error().message),
            kMaxVerdictMessage);
    return std::move(w).take();
}

Status decode_verdict(std::span<const std::uint8_t> bytes) {
    auto malformed = [&] {
        return make_error(Errc::protocol, "rank 0's preflight verdict of " +
                                              std::to_string(bytes.size()) +
                                              " bytes is malformed: all ranks must use the same "
                                              "libbootstrap release");
    };
    if (bytes.size() < 9 || bytes[0] != kVerdictVersion) return malformed();
    FieldReader in(bytes.subspan(1));
    const std::uint32_t code = in.u32("code");
    const std::uint32_t len = in.u32("length");
    if (!in.ok()) return malformed();
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

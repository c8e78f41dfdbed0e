// SPDX-License-Identifier: Apache-2.0
// The option defaults and ranges that code outside the option table reads, each declared once
// (NCCL_PARAM style: the name, the variable, the type, the default and the range together). The
// option table's row, `--ddp=help`, the docs, the SLURM_DDP_* reader and every consumer read these
// constants, so changing a default or a bound is a one-line change here.
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>

#include "core/contract/contract.hpp"

namespace sddp {

// A whole-number option: its default and the values it accepts, in the unit the user writes.
struct NumberParam {
    std::string_view option{};       // the --ddp key
    const char* variable = nullptr;  // the SLURM_DDP_* variable it travels in, if any
    std::uint32_t value = 0;         // the default
    std::uint32_t min = 0;
    std::uint32_t max = 0;
};

// timeout=SECONDS, SLURM_DDP_TIMEOUT: how long the rendezvous and NCCL's setup may take.
inline constexpr NumberParam kTimeoutParam{
    .option = "timeout", .variable = contract::kTimeoutVar, .value = 300, .min = 1, .max = 86400};
inline constexpr std::chrono::seconds kDefaultRendezvousTimeout{kTimeoutParam.value};

// ports=K, SLURM_DDP_PORTS: the size of the step's block of ports from MASTER_PORT on.
inline constexpr NumberParam kPortsParam{
    .option = "ports", .variable = contract::kPortsVar, .value = 4, .min = 1, .max = 256};

// --ddp=check (and `slurm-ddp check`) without a timeout: a healthy step answers in well under a
// second, so a short bound keeps a broken one from holding the program back.
inline constexpr std::uint32_t kCheckTimeoutSeconds = 5;
// --ddp=check with timeout=: the check runs before the program, so it gets at most this much of
// the rendezvous timeout.
inline constexpr std::uint32_t kCheckTimeoutMaxSeconds = 30;

}  // namespace sddp

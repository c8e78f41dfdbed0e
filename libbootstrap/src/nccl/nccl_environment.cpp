// SPDX-License-Identifier: Apache-2.0
#include "nccl/nccl_environment.hpp"

#include <cerrno>
#include <cstdlib>

#include "core/base/numbers.hpp"
#include "core/contract/contract.hpp"

namespace sddp::nccl {

std::optional<int> comm_blocking_override(const std::optional<std::string>& value) {
    if (!value) return std::nullopt;
    // NCCL parses its integer parameters with strtoll(value, &end, 0) and keeps the default
    // when nothing was parsed; trailing characters are ignored.
    const char* s = value->c_str();
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(s, &end, 0);
    if (end == s || errno != 0) return std::nullopt;
    if (v == 0 || v == 1) return static_cast<int>(v);
    return std::nullopt;
}

Status check_comm_blocking(const std::optional<std::string>& value) {
    const auto mode = comm_blocking_override(value);
    if (!mode) return ok_status();
    const std::string what = "NCCL_COMM_BLOCKING=" + quote_value(*value);
    const std::string fix =
        "; unset NCCL_COMM_BLOCKING for this program (slurm-ddp's communicators are blocking "
        "already, and their init is bounded by " +
        std::string(contract::kTimeoutVar) + ")";
    if (*mode == 1) {
        return make_error(Errc::invalid_input,
                          what +
                              " makes NCCL initialise every communicator blocking, so NCCL init "
                              "could wait for a missing rank forever instead of failing at the "
                              "timeout" +
                              fix);
    }
    return make_error(Errc::invalid_input,
                      what +
                          " makes every NCCL communicator non-blocking, so each collective on the "
                          "communicators slurm-ddp hands out could return ncclInProgress, which "
                          "code written for plain NCCL does not expect" +
                          fix);
}

}  // namespace sddp::nccl

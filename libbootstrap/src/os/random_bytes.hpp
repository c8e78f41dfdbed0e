// SPDX-License-Identifier: Apache-2.0
// Random bytes from the kernel's CSPRNG: step secrets and handshake nonces.
#pragma once

#include <cstddef>

#include "core/base/bytes.hpp"
#include "core/base/result.hpp"

namespace sddp {

// `n` bytes from getrandom(2), retried on EINTR and short reads; fails only if the kernel
// refuses (the message says why).
Result<Bytes> random_bytes(std::size_t n);

}  // namespace sddp

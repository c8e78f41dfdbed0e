// SPDX-License-Identifier: Apache-2.0
#include "core/contract/contract.hpp"

#include "core/base/bytes.hpp"

namespace sddp::contract {

std::string encode_secret(std::span<const std::uint8_t> raw) {
    return to_hex(raw);
}

Result<std::string> read_secret(const EnvLookup& env) {
    const auto v = env(kSecretVar);
    if (!v || v->empty()) return std::string();
    // Never quote the value: it is a secret.
    const std::string fix = std::string("; srun --ddp sets it to ") +
                            std::to_string(2 * kSecretBytes) +
                            " hex digits for each step: unset it or relaunch with srun --ddp";
    if (v->size() != 2 * kSecretBytes) {
        return make_error(Errc::invalid_input, std::string(kSecretVar) + " has " +
                                                   std::to_string(v->size()) + " characters, not " +
                                                   std::to_string(2 * kSecretBytes) + fix);
    }
    auto raw = from_hex(*v);
    if (!raw) {
        return make_error(
            Errc::invalid_input,
            std::string(kSecretVar) + " holds a character that is not a hex digit" + fix);
    }
    return std::string(raw->begin(), raw->end());
}

}  // namespace sddp::contract

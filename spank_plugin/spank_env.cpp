// SPDX-License-Identifier: Apache-2.0
#include "spank_env.hpp"

namespace sddp::plugin {

EnvLookup spank_env(spank_t sp) {
    return [sp](std::string_view name) -> std::optional<std::string> {
        const std::string key(name);
        std::string buf(256, '\0');
        while (true) {
            const spank_err_t rc =
                spank_getenv(sp, key.c_str(), buf.data(), static_cast<int>(buf.size()));
            if (rc == ESPANK_SUCCESS) {
                buf.resize(buf.find('\0'));
                return buf;
            }
            if (rc != ESPANK_NOSPACE) return std::nullopt;
            // Too long to be Slurm's: present, but as a value every parser rejects, so the error
            // names this variable instead of falling back to another one as if it were unset.
            if (static_cast<int>(buf.size()) >= kMaxEnvValue) return std::string(kOversizedValue);
            buf.assign(buf.size() * 16, '\0');
        }
    };
}

Status apply_env(spank_t sp, const std::vector<EnvAssignment>& vars) {
    const EnvLookup env = spank_env(sp);
    for (const auto& v : vars) {
        // spank_setenv(overwrite=0) keeps an exported empty value (`MASTER_PORT= srun ...`); the
        // derivation treats empty as unset, so the task must get what it derived.
        bool keep = v.keep_existing;
        if (keep) {
            const auto existing = env(v.name);
            keep = existing && !existing->empty();
        }
        const spank_err_t rc = spank_setenv(sp, v.name.c_str(), v.value.c_str(), keep ? 0 : 1);
        if (rc != ESPANK_SUCCESS && !(keep && rc == ESPANK_ENV_EXISTS)) {
            return make_error(Errc::io, "cannot set " + v.name +
                                            " in the task environment: " + spank_strerror(rc));
        }
    }
    return ok_status();
}

}  // namespace sddp::plugin

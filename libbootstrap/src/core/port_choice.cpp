// SPDX-License-Identifier: Apache-2.0
#include "core/port_choice.hpp"

#include <cerrno>

#include "core/numbers.hpp"

namespace sddp {
Status master_port_status(std::uint16_t port, std::string_view source, int bind_errno) {
    if (bind_errno == 0) return ok_status();
    const std::string what = "MASTER_PORT=" + std::to_string(port) + " (" + std::string(source) +
                             ") cannot be used on rank 0's node: ";
    if (bind_errno == EADDRINUSE) {
        return make_error(
            Errc::io, what +
                          "another process holds it; give a free port with --ddp=port=N, or "
                          "let Slurm reserve one with srun --resv-ports (needs MpiParams=ports= "
                          "in slurm.conf)");
    }
    return make_error(Errc::io, what + "binding it failed with errno " +
                                    std::to_string(bind_errno) +
                                    "; give another port with --ddp=port=N");
}

}  // namespace sddp

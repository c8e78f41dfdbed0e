// SPDX-License-Identifier: Apache-2.0
#include "os/random_bytes.hpp"

#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace sddp {

Result<Bytes> random_bytes(std::size_t n) {
    Bytes out(n);
    std::size_t got = 0;
    while (got < n) {
        const ssize_t r = ::getrandom(out.data() + got, n - got, 0);
        if (r < 0) {
            if (errno == EINTR) continue;
            return make_error(Errc::io, std::string("getrandom failed: ") + std::strerror(errno));
        }
        got += static_cast<std::size_t>(r);
    }
    return out;
}

}  // namespace sddp

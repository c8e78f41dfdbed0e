// SPDX-License-Identifier: Apache-2.0
#include "nccl/nccl_unique_ids.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/base/numbers.hpp"

namespace sddp::nccl {

int id_root(int index, int count, int world_size) {
    const int per = world_size / count, extra = world_size % count;
    return index * per + std::min(index, extra);
}

Status check_comm_id(const std::optional<std::string>& nccl_comm_id, int count) {
    if (!nccl_comm_id || count <= 1) return ok_status();
    return make_error(Errc::invalid_input,
                      "NCCL_COMM_ID=" + quote_value(*nccl_comm_id) + " is set and " +
                          std::to_string(count) +
                          " NCCL unique ids were asked for (the nccl_unique_ids option): "
                          "NCCL_COMM_ID pins every id to one "
                          "address, so the id roots would collide. Unset NCCL_COMM_ID, or use "
                          "one id");
}

Result<std::vector<ncclUniqueId>> share_unique_ids(const NcclApi& nccl, Transport& t, int count) {
    std::vector<ncclUniqueId> ids(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
        const int root = id_root(i, count, t.world_size());
        Bytes b;
        if (t.rank() == root) {
            ncclUniqueId id;
            const ncclResult_t r = nccl.GetUniqueId(&id);
            if (r == ncclSuccess) {
                b.push_back(0);
                const auto* p = reinterpret_cast<const std::uint8_t*>(&id);
                b.insert(b.end(), p, p + sizeof id);
            } else {
                const std::string why = std::string("ncclGetUniqueId failed: ") +
                                        nccl.GetErrorString(r) + ": " + nccl.GetLastError(nullptr) +
                                        " (no usable network interface? set NCCL_SOCKET_IFNAME)";
                b.push_back(1);
                b.insert(b.end(), why.begin(), why.end());
            }
        }
        SDDP_CHECK(t.broadcast(b, root));
        if (b.empty()) return make_error(Errc::protocol, "an empty NCCL id arrived");
        if (b[0] != 0) {
            return make_error(Errc::io, "rank " + std::to_string(root) + ": " +
                                            std::string(b.begin() + 1, b.end()));
        }
        if (b.size() != 1 + sizeof(ncclUniqueId)) {
            return make_error(Errc::protocol, "the NCCL id from rank " + std::to_string(root) +
                                                  " has " + std::to_string(b.size() - 1) +
                                                  " bytes, not " +
                                                  std::to_string(sizeof(ncclUniqueId)) +
                                                  " (a damaged rendezvous message)");
        }
        std::memcpy(&ids[static_cast<std::size_t>(i)], b.data() + 1, sizeof(ncclUniqueId));
    }
    return ids;
}

}  // namespace sddp::nccl

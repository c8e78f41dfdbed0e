#include "nccl/nccl_unique_ids.hpp"

#include <cstring>
#include <string>

namespace sddp::nccl {

int id_root(int index, int count, int world_size) {
    return static_cast<int>(static_cast<long long>(index) * world_size / count);
}

Result<std::vector<ncclUniqueId>> share_unique_ids(Transport& t, int count) {
    std::vector<ncclUniqueId> ids(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
        const int root = id_root(i, count, t.world_size());
        Bytes b;
        if (t.rank() == root) {
            ncclUniqueId id;
            const ncclResult_t r = ncclGetUniqueId(&id);
            if (r == ncclSuccess) {
                b.push_back(0);
                const auto* p = reinterpret_cast<const std::uint8_t*>(&id);
                b.insert(b.end(), p, p + sizeof id);
            } else {
                const std::string why = std::string("ncclGetUniqueId failed: ") +
                                        ncclGetErrorString(r) + ": " + ncclGetLastError(nullptr) +
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
                                                  ": ranks use different NCCL versions");
        }
        std::memcpy(&ids[static_cast<std::size_t>(i)], b.data() + 1, sizeof(ncclUniqueId));
    }
    return ids;
}

}  // namespace sddp::nccl

// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/self_transport.hpp"

namespace sddp {
namespace {

class SelfTransport final : public Transport {
  public:
    int rank() const override { return 0; }
    int world_size() const override { return 1; }
    std::string_view name() const override { return "self"; }
    Status broadcast(Bytes&, int root) override {
        if (root != 0) {
            return make_error(Errc::invalid_input,
                              "broadcast root " + std::to_string(root) + " in a world of one");
        }
        return ok_status();
    }
    Result<std::vector<Bytes>> allgather(std::span<const std::uint8_t> mine) override {
        return std::vector<Bytes>{Bytes(mine.begin(), mine.end())};
    }
    Result<std::vector<Bytes>> gather(std::span<const std::uint8_t> mine) override {
        return allgather(mine);
    }
    Status barrier() override { return ok_status(); }
    void abort(std::string_view) override {}
};

}  // namespace

std::unique_ptr<Transport> make_self_transport() {
    return std::make_unique<SelfTransport>();
}

}  // namespace sddp

#include "rendezvous/tcp_transport.hpp"

#include "rendezvous/tcp_node.hpp"

namespace sddp {
namespace {

class TcpTransport final : public Transport {
  public:
    explicit TcpTransport(std::unique_ptr<tcp::Node> node) : node_(std::move(node)) {}

    int rank() const override { return node_->config().rank; }
    int world_size() const override { return node_->config().world_size; }
    std::string_view name() const override { return "tcp"; }

    Status broadcast(Bytes& bytes, int root) override { return node_->broadcast(bytes, root); }
    Result<std::vector<Bytes>> allgather(std::span<const std::uint8_t> mine) override {
        return node_->allgather(mine);
    }
    Result<std::vector<Bytes>> gather(std::span<const std::uint8_t> mine) override {
        return node_->gather(mine);
    }
    Status barrier() override { return node_->barrier(); }
    void abort(std::string_view reason) override { node_->abort(reason); }

  private:
    std::unique_ptr<tcp::Node> node_;
};

}  // namespace

Result<std::unique_ptr<Transport>> make_tcp_transport(const RendezvousConfig& cfg) {
    SDDP_TRY(node, tcp::Node::create(cfg));
    return std::unique_ptr<Transport>(std::make_unique<TcpTransport>(std::move(node)));
}

}  // namespace sddp

// SPDX-License-Identifier: Apache-2.0
// The join: how this rank's part of the rendezvous tree comes to stand. It listens (for its
// node's other ranks, and in the leaders' tree for its child leaders), connects to its parent
// (join_parent.hpp), runs the server side of the handshake, and keeps count of who has joined.
// Who may wait in the handshake (rendezvous/protocol/admission.hpp) and who has joined
// (rendezvous/protocol/join_accounting.hpp) are pure state machines that it only feeds with
// events. Once the join completes the listeners close and the links are the collectives' to use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/result.hpp"
#include "os/hmac_sha256.hpp"
#include "rendezvous/protocol/admission.hpp"
#include "rendezvous/protocol/join_accounting.hpp"
#include "rendezvous/protocol/wire.hpp"
#include "rendezvous/tcp/connection.hpp"
#include "rendezvous/tcp/event_loop.hpp"
#include "rendezvous/tcp/fd_limit.hpp"
#include "rendezvous/tcp/links.hpp"
#include "rendezvous/tcp/socket.hpp"

namespace sddp::tcp {

// What the join needs of the node it runs in: the link table, its loop, and its failure.
class JoinLinks {
  public:
    virtual EventLoop& loop() = 0;
    // A new link over `conn`, pending until a handshake makes it a child or the parent.
    virtual Link& add_link(Connection conn) = 0;
    virtual void remove_link(std::uint64_t id) = 0;
    virtual const std::map<std::uint64_t, std::unique_ptr<Link>>& links() const = 0;
    virtual Link* parent_link() const = 0;
    virtual void set_parent(Link& link) = 0;
    virtual std::vector<Link*>& child_links() = 0;
    virtual void send_to(Link& link, std::shared_ptr<const Bytes> frame) = 0;
    virtual void update_interest(Link& link) = 0;
    // Reads what has arrived on `link`; false once it is gone or the node failed.
    virtual bool process_frames(Link& link) = 0;
    // One turn of the loop, until something happens or `until` passes.
    virtual void pump(Clock::time_point until) = 0;
    virtual Status drain(Clock::time_point deadline, std::string_view during) = 0;
    virtual Error fail(Error e, const Link* from) = 0;
    virtual const std::optional<Error>& failure() const = 0;
    virtual std::string describe(const Link& link) const = 0;

  protected:
    JoinLinks() = default;
    ~JoinLinks() = default;
    JoinLinks(const JoinLinks&) = default;
    JoinLinks& operator=(const JoinLinks&) = default;
};

class Join {
  public:
    Join(const Place& place, JoinLinks& node);

    // Listens and/or connects, authenticates, and waits until this rank's subtree has joined
    // (the whole world, on rank 0). Bounded by the configured timeout.
    Status run();

    // The loop's events for the ids the join registered (listeners, the parent being joined).
    bool owns(std::uint64_t id) const { return id < kFirstLinkId; }
    void on_event(std::uint64_t id, std::uint32_t events);
    // When the loop must wake for the join (handshake deadlines, paused listeners), and what
    // it does then.
    Clock::time_point wake(Clock::time_point until) const;
    void on_tick(Clock::time_point now);

    // A pending link's first frame, or what it sent that was not one.
    bool on_hello(Link& link, const OwnedFrame& frame);
    // `hello`: the peer's, when it got that far; the reject then carries our proof.
    void refuse(Link& link, const std::string& reason, const wire::Hello* hello = nullptr);
    // A child's report of ranks that joined below it; takes_joined says whether it may send one.
    bool takes_joined(const Link& link) const;
    void on_joined(Link& link, const OwnedFrame& frame);
    // A pending link goes away: its handshake slot is free again.
    void forget(std::uint64_t id);
    // The ranks reached through `link`, as far as the join knows.
    std::vector<int> ranks_behind(const Link& link) const;

    void close_listeners();
    void stop_admitting() { admission_.reset(); }

    static constexpr std::uint64_t kFirstLinkId = 16;  // below: the join's own ids

  private:
    Status start_listening();
    Status arm_listeners();  // (re)registers the listeners with the loop, after start or a pause
    Status connect_parent();
    // join_parent's waits for a node leader: the loop runs (its locals' handshakes go on) until
    // the parent's socket `fd` is ready for `events` or `until` passes; the revents, or 0.
    short serve_locals_until(int fd, short events, Clock::time_point until);
    void accept_from(bool local);
    void admit(Fd fd, bool local);
    std::optional<std::string> check_hello(const Link& link, const wire::Hello& h) const;
    // The hello's step tag is this step's and its proof verifies.
    bool proves_step(const Link& link, const wire::Hello& h) const;
    void welcome(Link& link, const wire::Hello& h);  // sends the welcome, seals the link
    void accept_child(Link& link, const wire::Hello& h);
    // Sends the parent the ranks welcomed since the last report, if any and the parent is known.
    void report_joined();
    void expire_handshakes(Clock::time_point now);
    void report_drop(const std::string& address, const char* why);
    bool join_complete() const;
    std::string describe_join_missing() const;
    // A leader that could not join rank 0 hands its reason to the locals waiting to join it.
    void turn_away_locals(const Error& why, Clock::time_point deadline);
    void tell_why_and_close(Link& link, const wire::Hello& h);
    void log(const std::string& line) const;

    const Place& place_;
    JoinLinks& node_;
    HmacKey secret_;   // the step secret, keyed once for every handshake (auth.hpp)
    std::string tag_;  // wire_tag(cfg): what every handshake's proofs cover

    FdLimitRaise fd_limit_;  // before the sockets: restored after they are closed
    Fd tcp_listener_;
    Fd local_listener_;
    Fd spare_fd_;  // released to accept-and-close when out of descriptors
    Clock::time_point listeners_paused_until_{};
    bool listeners_paused_ = false;
    short parent_wait_revents_ = 0;  // set by on_event for the socket serve_locals_until waits on

    std::optional<Admission> admission_;  // once listening
    std::optional<JoinAccounting> join_;  // root and node leaders, once the join starts
    std::optional<Error> turning_away_;   // set while turn_away_locals runs
    wire::Joined unreported_;             // welcomed here, not yet reported to the parent
    int turned_away_ = 0;
    mutable std::size_t refusals_ = 0;
    std::size_t shed_ = 0;
};

}  // namespace sddp::tcp

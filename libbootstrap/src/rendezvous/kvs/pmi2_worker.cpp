// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/kvs/pmi2_worker.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

namespace sddp {

struct Pmi2Worker::State {
    struct Job {
        std::function<int()> fn;
        bool done = false;
        int rc = 0;
    };
    std::mutex mu;
    std::condition_variable cv;  // jobs queued, or stop
    std::condition_variable done_cv;
    std::deque<std::shared_ptr<Job>> queue;
    bool stop = false;
    std::string library;                // "PMI2" or "PMIx", for messages
    std::optional<std::string> wedged;  // why calls are refused, once a call timed out
    std::thread thread;
};

namespace {

// Runs on the worker: owns a reference to the state, so a detached, blocked worker never
// touches freed memory even after the Pmi2Worker is gone.
void run(std::shared_ptr<Pmi2Worker::State> s) {
    std::unique_lock<std::mutex> lock(s->mu);
    for (;;) {
        s->cv.wait(lock, [&] { return s->stop || !s->queue.empty(); });
        if (s->queue.empty()) return;  // stop requested and nothing left
        auto job = s->queue.front();
        s->queue.pop_front();
        lock.unlock();
        const int rc = job->fn();
        lock.lock();
        job->done = true;
        job->rc = rc;
        s->done_cv.notify_all();
    }
}

}  // namespace

Pmi2Worker::Pmi2Worker(std::string library) : state_(std::make_shared<State>()) {
    state_->library = std::move(library);
    state_->thread = std::thread(run, state_);
}

Pmi2Worker::~Pmi2Worker() {
    std::unique_lock<std::mutex> lock(state_->mu);
    state_->stop = true;
    state_->cv.notify_all();
    const bool wedged = state_->wedged.has_value();
    lock.unlock();
    // A wedged worker is blocked inside libpmi2 and can never be joined.
    if (wedged) {
        state_->thread.detach();
    } else {
        state_->thread.join();
    }
}

Result<int> Pmi2Worker::call(std::function<int()> fn,
                             std::chrono::steady_clock::time_point deadline,
                             std::string_view what) {
    auto job = std::make_shared<State::Job>();
    job->fn = std::move(fn);
    std::unique_lock<std::mutex> lock(state_->mu);
    if (state_->wedged) {
        return make_error(Errc::timeout,
                          state_->library + " is unusable in this process: " + *state_->wedged);
    }
    state_->queue.push_back(job);
    state_->cv.notify_all();
    if (!state_->done_cv.wait_until(lock, deadline, [&] { return job->done; })) {
        state_->wedged = std::string(what) + " did not complete before the deadline";
        return make_error(Errc::timeout, *state_->wedged);
    }
    return job->rc;
}

}  // namespace sddp

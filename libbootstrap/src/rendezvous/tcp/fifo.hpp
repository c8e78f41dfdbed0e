// SPDX-License-Identifier: Apache-2.0
// A first-in, first-out queue over one vector, for the short queues of a link (frames waiting
// to be sent, frames waiting to be taken). std::deque allocates a map and a 512-byte block as
// soon as it is constructed, a cost every link of every rank paid although most hold one or two
// frames at a time; this allocates on the first push only.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace sddp::tcp {

template <typename T>
class Fifo {
  public:
    bool empty() const { return head_ == items_.size(); }
    std::size_t size() const { return items_.size() - head_; }
    T& front() { return items_[head_]; }
    typename std::vector<T>::iterator begin() {
        return items_.begin() + static_cast<std::ptrdiff_t>(head_);
    }
    typename std::vector<T>::iterator end() { return items_.end(); }

    void push_back(T item) { items_.push_back(std::move(item)); }
    void pop_front() {
        items_[head_] = T();  // release what it holds now, not when the queue empties
        if (++head_ == items_.size()) {
            clear();
        } else if (head_ >= 32 && head_ >= items_.size() / 2) {
            // A queue that never empties does not grow forever.
            items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
            head_ = 0;
        }
    }
    void clear() {
        items_.clear();
        head_ = 0;
    }

  private:
    std::vector<T> items_;
    std::size_t head_ = 0;
};

}  // namespace sddp::tcp

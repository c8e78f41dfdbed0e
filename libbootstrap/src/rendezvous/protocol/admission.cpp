// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/protocol/admission.hpp"

#include <algorithm>

namespace sddp {

namespace {
// Enough distinct addresses to name a few sources of trouble; beyond that a report per address
// would be the flood of lines that the once-per-address rule exists to prevent.
constexpr std::size_t kReportedAddresses = 16;
}  // namespace

Admission::Admission(std::size_t slots, Clock::duration handshake_timeout)
    : slots_(std::max<std::size_t>(slots, 1)), timeout_(handshake_timeout) {}

bool Admission::first_drop(const std::string& address) {
    if (reported_.size() >= kReportedAddresses || reported_.count(address) != 0) return false;
    reported_.insert(address);
    return true;
}

void Admission::erase(std::map<Id, Entry>::iterator it) {
    const auto a = by_address_.find(it->second.address);
    if (a != by_address_.end()) {
        a->second.erase(it->first);
        if (a->second.empty()) by_address_.erase(a);
    }
    entries_.erase(it);
}

Admission::Decision Admission::arrive(Id id, const std::string& address, Clock::time_point now) {
    Decision d;
    if (entries_.size() >= slots_) {
        // The address holding the most slots; ties go to the one whose oldest entry is oldest.
        const std::set<Id>* busiest = nullptr;
        for (const auto& [addr, ids] : by_address_) {
            if (busiest == nullptr || ids.size() > busiest->size() ||
                (ids.size() == busiest->size() && *ids.begin() < *busiest->begin())) {
                busiest = &ids;
            }
        }
        if (busiest != nullptr) {
            const Id victim = *busiest->begin();
            const auto it = entries_.find(victim);
            d.report = first_drop(it->second.address);
            d.evict = victim;
            ++evicted_;
            erase(it);
        }
    }
    entries_.emplace(id, Entry{address, now + timeout_});
    by_address_[address].insert(id);
    return d;
}

void Admission::leave(Id id) {
    const auto it = entries_.find(id);
    if (it != entries_.end()) erase(it);
}

std::vector<Admission::Expired> Admission::expire(Clock::time_point now) {
    std::vector<Expired> out;
    // Deadlines grow with arrival order (one timeout for all), so the expired ones lead the map.
    while (!entries_.empty() && entries_.begin()->second.deadline <= now) {
        const auto it = entries_.begin();
        out.push_back(Expired{it->first, it->second.address, first_drop(it->second.address)});
        ++expired_;
        erase(it);
    }
    return out;
}

Admission::Clock::time_point Admission::next_deadline() const {
    return entries_.empty() ? Clock::time_point::max() : entries_.begin()->second.deadline;
}

std::size_t Admission::pending_from(const std::string& address) const {
    const auto a = by_address_.find(address);
    return a == by_address_.end() ? 0 : a->second.size();
}

}  // namespace sddp

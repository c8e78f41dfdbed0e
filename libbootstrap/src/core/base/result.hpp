// SPDX-License-Identifier: Apache-2.0
// Error and Result: the one way the core reports failure.
//
// The plugin runs inside slurmstepd, where an exception crossing the C ABI would kill the step
// daemon, so nothing in the core throws. Every fallible function returns Result<T>: a value, or
// an Error whose message already names the variable, the value and the fix, ready to be logged
// or returned to a user unchanged.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace sddp {

enum class Errc {
    invalid_input = 1,  // a user, site or Slurm value is malformed or inconsistent
    missing_input,      // a required variable or value is absent
    too_large,          // input would expand beyond a safety cap
    io,                 // socket, file or system call failure
    timeout,            // a bounded wait ran out
    auth,               // a peer failed authentication
    protocol,           // a peer sent something that is not our protocol
    peer_lost,          // a peer closed or died
    unsupported,        // the feature is not available in this build or on this machine
    internal,
};

struct Error {
    Errc code = Errc::internal;
    std::string message;
};

inline Error make_error(Errc code, std::string message) {
    return Error{code, std::move(message)};
}

template <typename T>
class [[nodiscard]] Result {
  public:
    Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
    Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

    bool ok() const { return v_.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() & { return std::get<0>(v_); }
    const T& value() const& { return std::get<0>(v_); }
    T&& value() && { return std::get<0>(std::move(v_)); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

    const Error& error() const { return std::get<1>(v_); }
    Error&& take_error() { return std::get<1>(std::move(v_)); }

  private:
    std::variant<T, Error> v_;
};

// Result<void>: success carries nothing.
struct Ok {};
using Status = Result<Ok>;
inline Status ok_status() {
    return Ok{};
}

}  // namespace sddp

// Propagate an error from an expression returning Result/Status; bind the value otherwise.
#define SDDP_TRY(var, expr)                                     \
    auto var##_result_ = (expr);                                \
    if (!var##_result_.ok()) return var##_result_.take_error(); \
    auto& var = var##_result_.value()

#define SDDP_CHECK(expr)                                          \
    do {                                                          \
        auto sddp_status_ = (expr);                               \
        if (!sddp_status_.ok()) return sddp_status_.take_error(); \
    } while (0)

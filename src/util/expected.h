#pragma once

// A value, or the npucc::Error that kept it from being made: what a low-level helper
// returns when some of its callers treat a failure as an ordinary outcome (a cache miss,
// an optimisation skipped, "not an npucc cache") and others as an error.
//
// Before, such helpers threw and about fifteen callers caught the Error only to turn it
// into nullopt or false, which read as error handling where there was none, and hid a
// real exception from elsewhere in the same try block. Now the caller that shrugs asks
// has_value(); the caller that cannot go on calls value(), which throws the very Error the
// helper would have thrown, so its message and hint reach the user unchanged.
//
// std::expected is C++23; npucc builds as C++17 (CMakeLists.txt), so this is the small
// part of it npucc needs.

#include "npucc/error.h"

#include <optional>
#include <utility>
#include <variant>

namespace npucc::util {

template <typename T> class Expected {
public:
  Expected(const T& value) : m_state(std::in_place_index<0>, value) {}
  Expected(T&& value) : m_state(std::in_place_index<0>, std::move(value)) {}
  Expected(Error error) : m_state(std::in_place_index<1>, std::move(error)) {}

  bool has_value() const { return m_state.index() == 0; }
  explicit operator bool() const { return has_value(); }

  // The value; throws the error when there is none.
  T& value() & { return has_value() ? std::get<0>(m_state) : throw std::get<1>(m_state); }
  const T& value() const& {
    return has_value() ? std::get<0>(m_state) : throw std::get<1>(m_state);
  }
  T value() && { return std::move(value()); }
  // The value, or `fallback` when there is none.
  T value_or(T fallback) && { return has_value() ? std::move(value()) : std::move(fallback); }
  // The value as an optional: nullopt when there is none.
  std::optional<T> ok() && {
    return has_value() ? std::optional<T>(std::move(value())) : std::nullopt;
  }

  T& operator*() & { return std::get<0>(m_state); }
  const T& operator*() const& { return std::get<0>(m_state); }
  T* operator->() { return &std::get<0>(m_state); }
  const T* operator->() const { return &std::get<0>(m_state); }

  // Only when !has_value().
  const Error& error() const { return std::get<1>(m_state); }

private:
  std::variant<T, Error> m_state;
};

// For a helper that makes nothing, only succeeds or fails.
struct Done {};
using Outcome = Expected<Done>;
inline Outcome success() {
  return Done{};
}

} // namespace npucc::util

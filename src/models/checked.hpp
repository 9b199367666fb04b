#pragma once
// Overflow-checked unsigned arithmetic for sizes that come from files and flags: an overflow is a
// value the input cannot mean, reported by the caller as a bad input, never wrapped.

#include <cstdint>
#include <optional>

namespace sparkops::models {

inline std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

inline std::optional<std::uint64_t> checked_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

inline std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) {
  return a / b + (a % b != 0 ? 1 : 0);
}

// Accumulates products and sums; once anything overflows, ok() stays false.
class CheckedSum {
 public:
  CheckedSum& add(std::uint64_t v) {
    const auto s = checked_add(value_, v);
    if (!s) ok_ = false;
    value_ = s.value_or(value_);
    return *this;
  }
  CheckedSum& add_product(std::uint64_t a, std::uint64_t b) {
    const auto p = checked_mul(a, b);
    if (!p) {
      ok_ = false;
      return *this;
    }
    return add(*p);
  }
  CheckedSum& add_product(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
    const auto p = checked_mul(a, b);
    if (!p) {
      ok_ = false;
      return *this;
    }
    return add_product(*p, c);
  }
  bool ok() const { return ok_; }
  std::uint64_t value() const { return value_; }

 private:
  std::uint64_t value_ = 0;
  bool ok_ = true;
};

}  // namespace sparkops::models

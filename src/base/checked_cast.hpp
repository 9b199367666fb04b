#pragma once
// Float-to-integer conversions for numbers that come from outside (a file, a flag, a device, a
// log). Converting a floating value that is NaN, infinite or outside the target type's range is
// undefined behaviour ([conv.fpint]; UBSan's float-cast-overflow, in the asan-ubsan preset), and
// std::llround/lround return an unspecified value there. These never do either:
//  - checked_round / checked_trunc: nullopt when the result does not fit (the caller names the
//    problem or drops the value);
//  - saturating_round: the nearest representable value, NaN -> 0 (for arithmetic whose result is
//    a bound anyway, such as a byte estimate or a time offset);
//  - saturating_add: the sum of two byte counts, the largest value where it would wrap.
// Range: an integer type with D value bits holds [-2^D, 2^D) (signed) or [0, 2^D) (unsigned), and
// 2^D is exact in a double, so the comparisons below are exact.

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>

namespace sparkops {

namespace checked_cast_detail {
template <class Int>
constexpr double end_of_range() {  // 2^D: the first value past Int's maximum
  double v = 1.0;
  for (int i = 0; i < std::numeric_limits<Int>::digits; ++i) v *= 2.0;
  return v;
}
template <class Int>
constexpr double start_of_range() {
  return std::is_signed_v<Int> ? -end_of_range<Int>() : 0.0;
}
}  // namespace checked_cast_detail

// v truncated toward zero, when that fits in Int.
template <class Int>
std::optional<Int> checked_trunc(double v) {
  static_assert(std::is_integral_v<Int>);
  using namespace checked_cast_detail;
  if (std::isnan(v)) return std::nullopt;
  const double t = std::trunc(v);
  if (t < start_of_range<Int>() || t >= end_of_range<Int>()) return std::nullopt;
  return static_cast<Int>(t);
}

// v rounded to the nearest integer (halves away from zero), when that fits in Int.
template <class Int>
std::optional<Int> checked_round(double v) {
  if (std::isnan(v)) return std::nullopt;
  return checked_trunc<Int>(std::round(v));
}

// v rounded to the nearest integer and clamped into Int; NaN is 0.
template <class Int>
Int saturating_round(double v) {
  using namespace checked_cast_detail;
  if (std::isnan(v)) return Int{0};
  const double r = std::round(v);
  if (r < start_of_range<Int>()) return std::numeric_limits<Int>::min();
  if (r >= end_of_range<Int>()) return std::numeric_limits<Int>::max();
  return static_cast<Int>(r);
}

// a + b, or the largest uint64 where the sum would wrap (a size beyond 2^64 reads as the largest).
constexpr std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return a > std::numeric_limits<std::uint64_t>::max() - b
             ? std::numeric_limits<std::uint64_t>::max()
             : a + b;
}

}  // namespace sparkops

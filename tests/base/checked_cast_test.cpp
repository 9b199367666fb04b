// base/checked_cast.hpp: float-to-integer conversions that are never undefined behaviour.
#include "base/checked_cast.hpp"

#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

namespace sparkops {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(CheckedCast, RoundAndTruncInsideTheRange) {
  EXPECT_EQ(checked_round<std::int64_t>(2.5), 3);
  EXPECT_EQ(checked_round<std::int64_t>(-2.5), -3);
  EXPECT_EQ(checked_trunc<std::int64_t>(-2.9), -2);
  EXPECT_EQ(checked_round<std::uint32_t>(4294967295.0), 4294967295u);
  EXPECT_EQ(checked_round<std::uint64_t>(18446744073709549568.0), 18446744073709549568ULL);
  EXPECT_EQ(checked_trunc<std::int64_t>(-9223372036854775808.0),
            std::numeric_limits<std::int64_t>::min());
}

TEST(CheckedCast, NothingOutsideTheRangeOrNotANumber) {
  for (const double v : {kNaN, kInf, -kInf, 1e300, 18446744073709551616.0}) {
    EXPECT_FALSE(checked_round<std::uint64_t>(v)) << v;
    EXPECT_FALSE(checked_round<std::int64_t>(v)) << v;
  }
  EXPECT_FALSE(checked_round<std::int64_t>(9223372036854775808.0));  // 2^63
  EXPECT_FALSE(checked_round<std::uint32_t>(4294967295.5));          // rounds to 2^32
  EXPECT_FALSE(checked_round<std::uint64_t>(-1.0));
  EXPECT_EQ(checked_round<std::uint64_t>(-0.4), 0u);  // rounds to zero: in range
  EXPECT_FALSE(checked_trunc<std::int32_t>(-2147483649.0));
}

TEST(CheckedCast, SaturatingRoundClampsAndMapsNaNToZero) {
  EXPECT_EQ(saturating_round<std::int64_t>(1e300), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(saturating_round<std::int64_t>(-kInf), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(saturating_round<std::uint64_t>(-5.0), 0u);
  EXPECT_EQ(saturating_round<std::size_t>(kNaN), 0u);
  EXPECT_EQ(saturating_round<std::uint8_t>(300.0), 255u);
  EXPECT_EQ(saturating_round<std::int32_t>(41.6), 42);
}

TEST(CheckedCast, SaturatingAddStopsAtTheLargestValue) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  EXPECT_EQ(saturating_add(2, 3), 5u);
  EXPECT_EQ(saturating_add(kMax - 1, 1), kMax);
  EXPECT_EQ(saturating_add(kMax - 1, 2), kMax);
  EXPECT_EQ(saturating_add(kMax, kMax), kMax);
  static_assert(saturating_add(1, 1) == 2);
}

}  // namespace
}  // namespace sparkops

#include "base/units.hpp"

#include <gtest/gtest.h>

namespace sparkops {

TEST(UnitsParseBytes, BinaryDecimalAndBare) {
  EXPECT_EQ(*parse_bytes("4", DefaultUnit::gib), 4 * kGiB);
  EXPECT_EQ(*parse_bytes("4G", DefaultUnit::bytes), 4 * kGiB);
  EXPECT_EQ(*parse_bytes("4GiB", DefaultUnit::bytes), 4 * kGiB);
  EXPECT_EQ(*parse_bytes("4GB", DefaultUnit::bytes), 4'000'000'000u);
  EXPECT_EQ(*parse_bytes("512M", DefaultUnit::bytes), 512 * kMiB);
  EXPECT_EQ(*parse_bytes("1.5g", DefaultUnit::bytes), 3 * kGiB / 2);
}

TEST(UnitsParseBytes, RejectsNegativeJunkAndUnknownUnits) {
  EXPECT_FALSE(parse_bytes("-4G", DefaultUnit::gib));
  EXPECT_FALSE(parse_bytes("lots", DefaultUnit::gib));
  EXPECT_FALSE(parse_bytes("4 parsecs", DefaultUnit::gib));
  EXPECT_FALSE(parse_bytes("1e30", DefaultUnit::gib));
  EXPECT_EQ(parse_bytes("4X", DefaultUnit::gib).error().code, Errc::invalid_argument);
}

TEST(UnitsParseDuration, SecondsFractionsAndUnits) {
  using namespace std::chrono_literals;
  EXPECT_EQ(*parse_duration("30"), 30s);
  EXPECT_EQ(*parse_duration("0.5"), 500ms);
  EXPECT_EQ(*parse_duration("30s"), 30s);
  EXPECT_EQ(*parse_duration("1m"), 60s);
  EXPECT_EQ(*parse_duration("2h"), 7200s);
  EXPECT_EQ(*parse_duration("250ms"), 250ms);
}

TEST(UnitsParseDuration, RejectsZeroNegativeAndJunk) {
  EXPECT_FALSE(parse_duration("0"));
  EXPECT_FALSE(parse_duration("-1s"));
  EXPECT_FALSE(parse_duration("soon"));
  EXPECT_FALSE(parse_duration("5 fortnights"));
  EXPECT_FALSE(parse_duration("nan"));
}

TEST(UnitsFormat, BinaryUnitsOneDecimal) {
  EXPECT_EQ(format_bytes(127600748ULL * 1024), "121.7 GiB");
  EXPECT_EQ(format_bytes(512 * kMiB), "512.0 MiB");
  EXPECT_EQ(format_bytes(12), "12 B");
  EXPECT_EQ(format_signed_bytes(-static_cast<std::int64_t>(kGiB)), "-1.0 GiB");
  EXPECT_EQ(format_gib(4 * kGiB), "4.0");
}

TEST(UnitsFormat, Durations) {
  using namespace std::chrono_literals;
  EXPECT_EQ(format_duration(12300ms), "12.3s");
  EXPECT_EQ(format_duration(185s), "3m05s");
  EXPECT_EQ(format_duration(3720s), "1h02m");
}

}  // namespace sparkops

#include "base/time_format.hpp"

#include <gtest/gtest.h>

namespace sparkops {

TEST(TimeFormat, Iso8601UtcWithMillis) {
  const SystemTime t{std::chrono::milliseconds{1762680372345}};
  EXPECT_EQ(format_iso8601_utc_ms(t), "2025-11-09T09:26:12.345Z");
  EXPECT_EQ(format_compact_utc(t), "20251109T092612Z");
}

TEST(TimeFormat, ParsesTheFormsLogsUse) {
  const SystemTime expected{std::chrono::milliseconds{1762680372345}};
  EXPECT_EQ(parse_timestamp("2025-11-09T09:26:12.345Z"), expected);
  EXPECT_EQ(parse_timestamp("2025/11/09 09:26:12.345"), expected);
  EXPECT_EQ(parse_timestamp("2025-11-09 11:26:12.345+02:00"), expected);
  EXPECT_EQ(parse_timestamp("yesterday"), std::nullopt);
  EXPECT_EQ(parse_timestamp("2025-13-09 09:26:12"), std::nullopt);
}

TEST(TimeFormat, RoundTripsIso) {
  const SystemTime t{std::chrono::milliseconds{1700000000123}};
  EXPECT_EQ(parse_timestamp(format_iso8601_utc_ms(t)), t);
}

// Found by fuzz/trainlog_detect and fuzz/thermal_csv (UBSan: int64 overflow in duration_cast).
TEST(TimeFormat, YearsOutsideTheNanosecondRangeAreNotTimestamps) {
  EXPECT_EQ(parse_timestamp("-999-08-16 11:59:58"), std::nullopt);
  EXPECT_EQ(parse_timestamp("9999-08-16 11:59:58"), std::nullopt);
  EXPECT_EQ(parse_timestamp("2023-08-16 -1:59:58"), std::nullopt);
  EXPECT_NE(parse_timestamp("2200-01-01 00:00:00"), std::nullopt);
}

}  // namespace sparkops

namespace sparkops {
namespace {

TEST(UtcOffsetParse, AcceptsTheSpellingsPeopleUse) {
  EXPECT_EQ(parse_utc_offset("+01:00"), std::chrono::seconds(3600));
  EXPECT_EQ(parse_utc_offset("-0530"), std::chrono::seconds(-(5 * 3600 + 30 * 60)));
  EXPECT_EQ(parse_utc_offset("+2"), std::chrono::seconds(7200));
  EXPECT_EQ(parse_utc_offset("0"), std::chrono::seconds(0));
}

TEST(UtcOffsetParse, RefusesOffsetsNoZoneHas) {
  EXPECT_FALSE(parse_utc_offset("+15:00"));
  EXPECT_FALSE(parse_utc_offset("+01:60"));
  EXPECT_FALSE(parse_utc_offset("east"));
  EXPECT_FALSE(parse_utc_offset(""));
}

}  // namespace
}  // namespace sparkops

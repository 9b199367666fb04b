#include <gtest/gtest.h>

#include "base/time_format.hpp"
#include "diagnose/thermal_log.hpp"

namespace sparkops::diagnose {
namespace {

TEST(ThermalLog, SkillThreeColumnCsvWithUnitsAndNa) {
  const auto log = parse_thermal_log(
      "timestamp,temperature.gpu,power.draw\n"
      "2025/11/09 09:26:12.345, 45, 11.23 W\n"
      "2025/11/09 09:26:42.345, 46, [N/A]\n",
      ThermalReadOptions{});
  ASSERT_TRUE(log.has_value());
  EXPECT_EQ(log->format, ThermalFormat::nvidia_smi);
  ASSERT_EQ(log->samples.size(), 2u);
  EXPECT_EQ(format_iso8601_utc_ms(log->samples[0].time), "2025-11-09T09:26:12.345Z");
  EXPECT_EQ(*log->samples[0].gpu_temp_c, 45);
  EXPECT_EQ(*log->samples[0].power_w, 11.23);
  EXPECT_FALSE(log->samples[1].power_w);
}

TEST(ThermalLog, RealNvidiaSmiHeaderAndTzOffset) {
  ThermalReadOptions o;
  o.tz_offset = std::chrono::hours(1);
  const auto log = parse_thermal_log(
      "timestamp, temperature.gpu, power.draw [W]\n2025/11/09 10:26:12.000, 45, 11.23\n", o);
  ASSERT_TRUE(log.has_value());
  EXPECT_EQ(format_iso8601_utc_ms(log->samples[0].time), "2025-11-09T09:26:12.000Z");
  EXPECT_EQ(*log->samples[0].power_w, 11.23);
}

TEST(ThermalLog, ExtendedCsvByColumnNameInAnyOrder) {
  const auto log = parse_thermal_log(
      "# sparkops sample host=spark\n"
      "power_w,unknown_future_column,timestamp_utc,gpu_index,reasons_hex,pstate,mem_available_"
      "bytes\n"
      "97.5,zzz,2025-11-09T09:26:12.345Z,0,0x20,P0,\n",
      ThermalReadOptions{});
  ASSERT_TRUE(log.has_value());
  EXPECT_EQ(log->format, ThermalFormat::extended_csv);
  ASSERT_EQ(log->samples.size(), 1u);
  EXPECT_EQ(*log->samples[0].power_w, 97.5);
  EXPECT_EQ(*log->samples[0].reasons_mask, 0x20u);
  EXPECT_EQ(*log->samples[0].pstate, 0);
  EXPECT_FALSE(log->samples[0].mem_available_bytes);  // empty cell = absent
}

TEST(ThermalLog, QuotedSensorNameWithCommaKeepsColumnsAligned) {
  const auto log = parse_thermal_log(
      "timestamp_utc,host_hottest_sensor,host_hottest_c,power_w\n"
      "2025-11-09T09:26:12.345Z,\"acpitz/temp1, \"\"zone\"\"\",55,97.5\n",
      ThermalReadOptions{});
  ASSERT_TRUE(log.has_value());
  ASSERT_EQ(log->samples.size(), 1u);
  EXPECT_EQ(*log->samples[0].host_hottest_c, 55);
  EXPECT_EQ(*log->samples[0].power_w, 97.5);
}

TEST(ThermalLog, JsonlWithNullsAndATornLastLine) {
  const auto log = parse_thermal_log(
      "{\"timestamp_utc\":\"2025-11-09T09:26:12.345Z\",\"gpu_index\":0,\"gpu_temp_c\":61,\"power_"
      "w\":null}\n"
      "{\"timestamp_utc\":\"2025-11-09T09:26:42.345Z\",\"gpu_temp_c\":62}\n"
      "{\"timestamp_utc\":\"2025-11-09T09:27",
      ThermalReadOptions{});
  ASSERT_TRUE(log.has_value());
  EXPECT_EQ(log->format, ThermalFormat::jsonl);
  ASSERT_EQ(log->samples.size(), 2u);
  EXPECT_FALSE(log->samples[0].power_w);
  EXPECT_TRUE(log->torn_last_line);
  EXPECT_EQ(log->skipped_rows, 0u);
}

TEST(ThermalLog, OtherHeaderCsvIsAClearError) {
  const auto log = parse_thermal_log("name,value\nfoo,1\n", ThermalReadOptions{}, "x.csv");
  ASSERT_FALSE(log.has_value());
  EXPECT_NE(log.error().detail.find("x.csv: not a thermal sample file"), std::string::npos);
}

TEST(ThermalLog, RowsGoingBackInTimeAreSkipped) {
  const auto log = parse_thermal_log(
      "timestamp,temperature.gpu,power.draw\n"
      "2025/11/09 09:26:12.345, 45, 11.23 W\n"
      "2025/11/09 09:20:00.000, 46, 11.00 W\n"
      "garbage row\n"
      "2025/11/09 09:27:12.345, 47, 12.00 W\n",
      ThermalReadOptions{});
  ASSERT_TRUE(log.has_value());
  EXPECT_EQ(log->samples.size(), 2u);
  EXPECT_EQ(log->backwards_rows, 1u);
  EXPECT_EQ(log->skipped_rows, 1u);
  EXPECT_EQ(describe_thermal_notes(*log).size(), 2u);
}

}  // namespace
}  // namespace sparkops::diagnose

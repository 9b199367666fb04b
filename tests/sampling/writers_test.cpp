#include "sampling/writers.hpp"

#include <cstdlib>
#include <ctime>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/text.hpp"
#include "support/test_support.hpp"

namespace sparkops::sampling {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class Writers : public ::testing::Test {
 protected:
  void SetUp() override {
    ::setenv("TZ", "UTC", 1);
    ::tzset();
  }
};

// 2025-11-09 09:26:12.345 UTC
const SystemTime kWall{seconds{1762680372} + milliseconds{345}};

Sample gb10_sample() {
  Sample s;
  s.wall_time = kWall;
  s.gpu_state = gpu::GpuState::ok;
  s.devices.push_back({0, "NVIDIA GB10", "", ""});
  GpuReading g;
  g.snapshot.index = 0;
  g.snapshot.temp_millicelsius = 45000;
  g.snapshot.power_microwatts = 11234000;
  s.gpus.push_back(g);
  return s;
}

TEST_F(Writers, NvidiaSmiRowMatchesTheSkillsThermalSampleLine) {
  // The line as the skill's thermal-sample.sh records it (copied in tests/fixtures/sample/).
  const std::string expected_file =
      test::slurp(test::fixture("sample/thermal-sample-nvidia-smi.log"));
  std::string ours = format_file_header(SampleFormat::nvidia_smi, {});
  for (const auto& r : format_sample_rows(SampleFormat::nvidia_smi, gb10_sample())) ours += r;
  EXPECT_EQ(ours, expected_file);
}

TEST_F(Writers, NvidiaSmiPrintsBracketedNotAvailableForAbsentFields) {
  Sample s = gb10_sample();
  s.gpus[0].snapshot.power_microwatts.reset();
  EXPECT_EQ(format_sample_rows(SampleFormat::nvidia_smi, s)[0],
            "2025/11/09 09:26:12.345, 45, [N/A]\n");
  s.gpus.clear();
  s.gpu_state = gpu::GpuState::lost;
  EXPECT_EQ(format_sample_rows(SampleFormat::nvidia_smi, s)[0],
            "2025/11/09 09:26:12.345, [N/A], [N/A]\n");
}

TEST_F(Writers, NvidiaSmiSeparatorAndNotAvailableSpellingMatchRealQueryOutput) {
  // Real GB10 output: ", " between fields, [N/A] kept bracketed (corpus copy in tests/fixtures).
  const std::string real =
      test::slurp(test::fixture("sample/query-gpu-name-mem-util-temp-noheader-nounits.txt"));
  EXPECT_NE(real.find("NVIDIA GB10, [N/A], [N/A], 0, 39"), std::string::npos);
  const std::string ours = format_sample_rows(SampleFormat::nvidia_smi, Sample{})[0];
  EXPECT_TRUE(ends_with(ours, ", [N/A], [N/A]\n")) << ours;
}

TEST_F(Writers, NvidiaSmiRoundsPowerToTwoDecimalsLikeNvidiaSmi) {
  Sample s = gb10_sample();
  s.gpus[0].snapshot.power_microwatts = 98765000;
  EXPECT_EQ(format_sample_rows(SampleFormat::nvidia_smi, s)[0],
            "2025/11/09 09:26:12.345, 45, 98.77 W\n");
}

TEST_F(Writers, OneRowPerGpuInIndexOrder) {
  Sample s = gb10_sample();
  GpuReading g1 = s.gpus[0];
  g1.snapshot.index = 1;
  g1.snapshot.temp_millicelsius = 50000;
  s.gpus.push_back(g1);
  const auto rows = format_sample_rows(SampleFormat::extended, s);
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_TRUE(starts_with(rows[0], "2025-11-09T09:26:12.345Z,0,45,"));
  EXPECT_TRUE(starts_with(rows[1], "2025-11-09T09:26:12.345Z,1,50,"));
}

TEST_F(Writers, ExtendedRowHasOneCellPerColumnAndEmptyForAbsent) {
  Sample s = gb10_sample();
  const auto row = format_sample_rows(SampleFormat::extended, s)[0];
  EXPECT_EQ(split(trim(row), ',').size(), extended_columns().size());
  EXPECT_EQ(row, "2025-11-09T09:26:12.345Z,0,45,,11.234" + std::string(27, ',') + "\n");
}

TEST_F(Writers, ExtendedQuotesASensorNameWithAComma) {
  Sample s;
  s.wall_time = kWall;
  s.host.hottest_sensor = "odd,chip/temp1";
  const auto row = format_sample_rows(SampleFormat::extended, s)[0];
  EXPECT_NE(row.find(",\"odd,chip/temp1\","), std::string::npos) << row;
}

TEST_F(Writers, JsonlHasEveryKeyInOrderWithNullForAbsent) {
  const auto row = format_sample_rows(SampleFormat::jsonl, gb10_sample())[0];
  const auto j = nlohmann::ordered_json::parse(row);
  ASSERT_EQ(j.size(), extended_columns().size());
  std::size_t i = 0;
  for (const auto& [key, value] : j.items()) EXPECT_EQ(key, extended_columns()[i++]);
  EXPECT_EQ(j["timestamp_utc"], "2025-11-09T09:26:12.345Z");
  EXPECT_EQ(j["power_w"], 11.234);
  EXPECT_TRUE(j["gpu_margin_c"].is_null());
}

TEST_F(Writers, ReasonsPrintAsHexAndNamesNoneWhenZero) {
  Sample s = gb10_sample();
  s.gpus[0].snapshot.clocks_event_reasons = 0;
  auto j = nlohmann::json::parse(format_sample_rows(SampleFormat::jsonl, s)[0]);
  EXPECT_EQ(j["reasons_hex"], "0x0");
  EXPECT_EQ(j["reasons"], "none");
  s.gpus[0].snapshot.clocks_event_reasons = 0x24;
  j = nlohmann::json::parse(format_sample_rows(SampleFormat::jsonl, s)[0]);
  EXPECT_EQ(j["reasons_hex"], "0x24");
  EXPECT_EQ(j["reasons"], "sw_power_cap|sw_thermal");
}

TEST_F(Writers, HeaderCheckAcceptsOwnHeaderAndRefusesAnother) {
  const FileMeta meta{"0.1.0", "h", "k", "d", "NVIDIA GB10"};
  for (auto f : {SampleFormat::nvidia_smi, SampleFormat::extended}) {
    EXPECT_TRUE(check_existing_header(f, format_file_header(f, meta), "f"))
        << sample_format_name(f);
  }
  const auto jsonl_head = format_sample_rows(SampleFormat::jsonl, gb10_sample())[0];
  EXPECT_TRUE(check_existing_header(SampleFormat::jsonl, jsonl_head, "f"));
  const auto wrong =
      check_existing_header(SampleFormat::extended, "timestamp,temperature.gpu,power.draw\n", "f");
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().code, Errc::conflict);
  EXPECT_FALSE(check_existing_header(SampleFormat::nvidia_smi, jsonl_head, "f"));
  EXPECT_FALSE(
      check_existing_header(SampleFormat::jsonl, "timestamp,temperature.gpu,power.draw\n", "f"));
}

TEST(SampleFormatParse, UnknownFormatIsInvalidArgument) {
  EXPECT_EQ(*parse_sample_format("nvidia-smi"), SampleFormat::nvidia_smi);
  const auto bad = parse_sample_format("csv");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, Errc::invalid_argument);
}

}  // namespace
}  // namespace sparkops::sampling

#include "sampling/writers.hpp"

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/text.hpp"
#include "base/time_format.hpp"
#include "sampling/sample_columns.hpp"
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

namespace sparkops::sampling {
namespace {

const SampleColumn& column(std::string_view name) {
  const SampleColumn* c = find_sample_column(name);
  EXPECT_NE(c, nullptr) << name;
  return *c;
}

std::string cell(std::string_view name, const SampleRow& row) {
  std::string out;
  append_csv_cell(out, column(name), row);
  return out;
}

// The cells are written with std::to_chars; every one must be the text fmt printed before (the
// golden files hold rows of a few values; these are many, the rounding ties and the extremes).
TEST(ExtendedCells, NumbersPrintAsFmtPrintedThem) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> values = {0.0,    -0.0,    0.0005,  0.0015,   0.0025, 1.0005,
                                2.0625, -2.0625, 45.0,    52.375,   1e-9,   123456.7895,
                                1e15,   9.2e18,  -9.3e18, 1.7e308,  -1e300, 4.9e-324,
                                kInf,   -kInf,   kNaN,    11.234999};
  std::uint64_t state = 88172645463325252ULL;  // xorshift64: the same values on every run
  const auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  for (int i = 0; i < 20000; ++i) {
    const std::uint64_t bits = next();
    double v = 0;
    if (i % 2 == 0) {
      std::memcpy(&v, &bits, sizeof v);  // any double, NaNs and subnormals included
    } else {
      v = static_cast<double>(static_cast<std::int64_t>(bits % 2000000001) - 1000000000) / 1000.0 *
          static_cast<double>(1 + (bits >> 40) % 1000);
    }
    values.push_back(v);
  }
  for (const double v : values) {
    SampleRow row;
    row.power_w = v;
    row.mem_total_bytes = v;
    row.gpu_temp_c = v;
    ASSERT_EQ(cell("power_w", row), fmt::format("{:.3f}", v)) << v;
    // Whole-number columns saturate outside int64 (NaN reads as the low end).
    const std::int64_t whole = !(v > -9.2e18)  ? std::numeric_limits<std::int64_t>::min()
                               : !(v < 9.2e18) ? std::numeric_limits<std::int64_t>::max()
                                               : static_cast<std::int64_t>(v);
    ASSERT_EQ(cell("mem_total_bytes", row), fmt::format("{}", whole)) << v;
    std::string celsius = fmt::format("{:.3f}", v);
    while (!celsius.empty() && celsius.back() == '0') celsius.pop_back();
    if (!celsius.empty() && celsius.back() == '.') celsius.pop_back();
    ASSERT_EQ(cell("gpu_temp_c", row), celsius) << v;
  }
  for (int i = 0; i < 2000; ++i) {
    const std::uint64_t bits = i < 3 ? static_cast<std::uint64_t>(i) : next();
    SampleRow row;
    row.reasons_mask = bits;
    row.pstate = static_cast<std::int64_t>(bits);
    row.gpu_index = static_cast<std::int64_t>(bits);
    ASSERT_EQ(cell("reasons_hex", row), fmt::format("{:#x}", bits));
    ASSERT_EQ(cell("pstate", row), fmt::format("P{}", static_cast<std::int64_t>(bits)));
    ASSERT_EQ(cell("gpu_index", row), fmt::format("{}", static_cast<std::int64_t>(bits)));
  }
}

TEST(ExtendedCells, TimestampPrintsAsTheIsoFormatter) {
  // SystemTime counts nanoseconds in an int64: its first and last whole milliseconds are in
  // 1677 and 2262 (a year-0 or year-9999 time point overflows it; UBSan's signed-overflow check).
  for (const std::int64_t ms :
       {std::int64_t{0}, std::int64_t{1762680372345}, std::int64_t{-1},
        std::int64_t{-9223372036854}, std::int64_t{9223372036854}, std::int64_t{951782400999}}) {
    SampleRow row;
    row.time = SystemTime{milliseconds{ms}};
    EXPECT_EQ(cell("timestamp_utc", row), format_iso8601_utc_ms(row.time)) << ms;
    std::string appended = "x";
    append_iso8601_utc_ms(appended, row.time);
    EXPECT_EQ(appended, "x" + format_iso8601_utc_ms(row.time)) << ms;
  }
  SampleRow row;
  row.time = SystemTime{milliseconds{1762680372345}};
  EXPECT_EQ(cell("timestamp_utc", row), "2025-11-09T09:26:12.345Z");
}

}  // namespace
}  // namespace sparkops::sampling

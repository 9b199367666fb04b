// Numbers from files and flags are checked (docs/reliability.md "Numbers"): a float that does not
// fit the integer it becomes, NaN/inf and absurd configuration thresholds.
#include <algorithm>
#include <limits>
#include <ostream>
#include <string>

#include <gtest/gtest.h>

#include "base/text.hpp"
#include "base/units.hpp"
#include "config/config.hpp"
#include "config/config_bounds.hpp"
#include "host/proc_times.hpp"
#include "support/test_support.hpp"
#include "trainlog/format_trainer_state.hpp"
#include "trainlog/parse_log.hpp"
#include "workloads/caps.hpp"

namespace sparkops {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kHugeStep =
    R"({"max_steps": 1e300, "log_history": [{"step": 1, "loss": 1.0}, {"step": 1e300, "loss": 0.9},
        {"step": -4, "loss": 0.9}, {"step": 2.5, "loss": 0.9}, {"step": 3, "loss": 0.8}]})";

// {"step": 1e300} was cast to int64 (undefined behaviour; -9223372036854775808 on x86-64).
TEST(Numbers, TrainerStateStepThatFitsNoIntegerIsAMalformedRecord) {
  auto series = trainlog::parse_trainer_state(kHugeStep, "trainer_state.json");
  ASSERT_TRUE(series) << series.error().detail;
  ASSERT_EQ(series->steps.size(), 2U);
  EXPECT_EQ(series->steps[0].step, 1);
  EXPECT_EQ(series->steps[1].step, 3);
  EXPECT_EQ(series->notes.malformed_records, 3U);
  EXPECT_FALSE(series->total_steps.has_value());
}

TEST(Numbers, AnalyzeNeverPrintsAWrappedStep) {
  const test::TempDir tmp;
  test::write_text(tmp / "trainer_state.json", kHugeStep);
  const auto r = test::run_sparkops({"analyze", "--log", (tmp / "trainer_state.json").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("-9223372036854775808"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("step 1 to 3"), std::string::npos) << r.out;
}

TEST(Numbers, ExactIntegerRefusesWhatNoInt64Holds) {
  EXPECT_EQ(exact_integer(10.0), 10);
  EXPECT_EQ(exact_integer(9007199254740992.0), 9007199254740992LL);
  EXPECT_FALSE(exact_integer(1e300));
  EXPECT_FALSE(exact_integer(-1e19));
  EXPECT_FALSE(exact_integer(std::numeric_limits<double>::infinity()));
  EXPECT_FALSE(exact_integer(std::numeric_limits<double>::quiet_NaN()));
  EXPECT_FALSE(exact_integer(2.5));
}

// fairseq's num_updates went through static_cast<int64_t>(double): 1e300 is undefined behaviour
// (float-cast-overflow aborts the asan-ubsan build). A count that fits no integer is not a step.
TEST(Numbers, FairseqUpdateCountThatFitsNoIntegerIsNotAStep) {
  const std::string log =
      "2021-03-01 12:00:00 | INFO | train_inner | epoch 001:    100 / 1000 loss=8.21, ups=2.71, "
      "num_updates=100, wall=40\n"
      "2021-03-01 12:00:36 | INFO | train_inner | epoch 001:    200 / 1000 loss=8.01, ups=2.71, "
      "num_updates=1e300, wall=76\n"
      "2021-03-01 12:01:12 | INFO | train_inner | epoch 001:    300 / 1000 loss=7.90, ups=2.71, "
      "num_updates=300, wall=112\n";
  trainlog::ParseOptions options;
  options.format = trainlog::LogFormat::fairseq;
  options.use_mtime = false;
  const auto series = trainlog::parse_log_text(log, options);
  ASSERT_TRUE(series) << series.error().detail;
  ASSERT_EQ(series->steps.size(), 2U);
  EXPECT_EQ(series->steps[0].step, 100);
  EXPECT_EQ(series->steps[1].step, 300);
}

// /proc/uptime of a captured root with an absurd value: one error, no float-to-integer overflow.
TEST(Numbers, UptimePastAnyIntegerIsMalformed) {
  EXPECT_FALSE(host::parse_proc_uptime("1e300 5.0\n"));
  EXPECT_TRUE(host::parse_proc_uptime("12345.67 5.0\n"));
}

// A serving process's own command line (`--gpu-memory-utilization 1e300`) is anyone's text.
TEST(Numbers, AbsurdCapFractionClaimsNothing) {
  workloads::CapInfo cap;
  cap.fraction = 1e300;
  EXPECT_FALSE(workloads::cap_claim_bytes(cap, 128ULL << 30));
  cap.fraction = 0.5;
  EXPECT_EQ(workloads::cap_claim_bytes(cap, 128ULL << 30), 64ULL << 30);
}

TEST(Numbers, DurationsThatAreNotNumbersAreRefused) {
  EXPECT_FALSE(parse_duration("nan"));
  EXPECT_FALSE(parse_duration("nans"));
  EXPECT_FALSE(parse_duration("1e300s"));
}

// Sizes between 2^63 and 2^64 went through llround, which overflows long long there.
TEST(Numbers, SizesAbove2To63AreExactNotWrapped) {
  const auto v = parse_bytes("16000000000000000000", DefaultUnit::bytes);
  ASSERT_TRUE(v) << v.error().detail;
  EXPECT_EQ(*v, 16000000000000000000ULL);
  EXPECT_FALSE(parse_bytes("18446744073709551616", DefaultUnit::bytes));
}

struct BadThreshold {
  const char* toml;
  const char* key;
};

// Stable, readable test names (ctest lists them): the key and the case's index, never the bytes.
void PrintTo(const BadThreshold& b, std::ostream* os) {
  *os << b.key;
}
std::string threshold_case_name(const ::testing::TestParamInfo<BadThreshold>& info) {
  std::string name = info.param.key;
  std::replace(name.begin(), name.end(), '.', '_');
  return name + "_" + std::to_string(info.index);
}

class ConfigThreshold : public ::testing::TestWithParam<BadThreshold> {};

// Each value reaches analyze through SPARKOPS_CONFIG: exit 2, one line naming the key.
TEST_P(ConfigThreshold, IsRefusedWithOneLineNamingTheKey) {
  const test::TempDir tmp;
  test::write_text(tmp / "config.toml", GetParam().toml);
  test::write_text(tmp / "train.log", "{'loss': 1.0, 'epoch': 0.1}\n");
  const auto r = test::run_sparkops({"analyze", "--log", (tmp / "train.log").string()},
                                    {{"SPARKOPS_CONFIG", (tmp / "config.toml").string()}});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(GetParam().key), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    Absurd, ConfigThreshold,
    ::testing::Values(
        BadThreshold{"[analyze]\nslowdown_factor = inf\n", "analyze.slowdown_factor"},
        BadThreshold{"[analyze]\nslowdown_factor = nan\n", "analyze.slowdown_factor"},
        BadThreshold{"[analyze]\nslowdown_factor = 1e308\n", "analyze.slowdown_factor"},
        BadThreshold{"[analyze]\nsustain_steps = 9223372036854775807\n", "analyze.sustain_steps"},
        BadThreshold{"[analyze]\nwarmup_steps = -1\n", "analyze.warmup_steps"},
        BadThreshold{"[thermal]\nlow_clock_ratio = 7\n", "thermal.low_clock_ratio"},
        BadThreshold{"[thermal]\nhot_celsius = -inf\n", "thermal.hot_celsius"},
        BadThreshold{"[pool]\noverhead = \"16000PiB\"\n", "pool.overhead"},
        BadThreshold{"[pool]\noverhead = \"100TiB\"\n", "pool.overhead"},
        BadThreshold{"[gpu]\ntimeout = \"3h\"\n", "gpu.timeout"}),
    threshold_case_name);

TEST(Numbers, FlagThresholdsAreCheckedLikeFileOnes) {
  const test::TempDir tmp;
  test::write_text(tmp / "train.log", "{'loss': 1.0, 'epoch': 0.1}\n");
  for (const auto& [flag, value] : {std::pair<std::string, std::string>{"--slowdown-factor", "inf"},
                                    {"--sustain-steps", "9223372036854775807"},
                                    {"--warmup-steps", "-3"}}) {
    const auto r =
        test::run_sparkops({"analyze", "--log", (tmp / "train.log").string(), flag, value});
    EXPECT_EQ(r.exit_code, 2) << flag << " " << value << ": " << r.err;
    EXPECT_NE(r.err.find(flag), std::string::npos) << r.err;
  }
}

// A numeric key without a stated range would let the next absurd value through.
TEST(Numbers, EveryNumericConfigKeyHasARange) {
  for (const auto& key : config::config_keys()) {
    const bool numeric = key.kind == "bytes" || key.kind == "duration" || key.kind == "number" ||
                         key.kind == "integer";
    if (!numeric) continue;
    const config::ConfigBounds* b = config::config_bounds(key.name);
    ASSERT_NE(b, nullptr) << key.name << " has no range in src/config/config_bounds.cpp";
    EXPECT_FALSE(b->why.empty()) << key.name;
    config::Config defaults;
    EXPECT_TRUE(defaults.set_from_flag(key.name, std::string(key.default_value)))
        << key.name << "'s default is outside its own range";
  }
}

}  // namespace
}  // namespace sparkops

// Every subcommand against a table of bad inputs: missing files, a directory where a file is
// expected (stands in for permission denied, since the suite runs as root), garbage, truncated,
// non-UTF-8, NUL bytes, negative and absurd numbers, conflicting flags. Each must print exactly one
// line "sparkops: ..." naming the problem, exit with its documented code and not die by a signal.
#include <algorithm>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "base/text.hpp"
#include "support/test_support.hpp"

namespace sparkops {
namespace {

struct BadInput {
  std::string name;
  std::vector<std::string> args;  // "{tmp}" and "{fx}" are replaced
  std::string names;              // the stderr line must contain this (the input or the flag)
  int exit_code = 2;
};

// ctest names carry the parameter: print its name, not the struct's bytes.
void PrintTo(const BadInput& b, std::ostream* os) {
  *os << b.name;
}

std::vector<BadInput> table() {
  const std::string megatron = "{fx}/logs/megatron-lm_gpt2-345m_8gpu_iterations.log";
  const std::string idle = "{fx}/roots/gb10-idle";
  return {
      // status
      {"status_unknown_gpu_source", {"status", "--gpu", "bogus"}, "--gpu"},
      {"status_negative_overhead",
       {"--root", idle, "status", "--overhead", "-5G", "--gpu", "none"},
       "--overhead"},
      {"status_absurd_overhead",
       {"--root", idle, "status", "--overhead", "99999999999999999999999T", "--gpu", "none"},
       "--overhead"},
      {"status_unknown_flag", {"status", "--bogus"}, "--bogus"},
      // config
      {"config_unexpected_argument", {"config", "--json", "extra"}, "extra"},
      // plan
      {"plan_unknown_model", {"plan", "nosuchmodel"}, "nosuchmodel"},
      {"plan_directory_without_config", {"plan", "{tmp}/adir"}, "config.json"},
      {"plan_truncated_config", {"plan", "{tmp}/truncated"}, "config.json"},
      {"plan_negative_params", {"plan", "--params", "-70B"}, "--params"},
      {"plan_overflowing_params", {"plan", "--params", "1e400"}, "--params"},
      {"plan_zero_batch", {"plan", "--params", "70B", "--batch", "0"}, "--batch"},
      {"plan_empty_list_entry", {"plan", "--params", "70B", "--batch", "1,2,,4"}, "--batch"},
      {"plan_absurd_seq", {"plan", "--params", "70B", "--seq", "99999999999999999999"}, "--seq"},
      {"plan_wrong_type_rank", {"plan", "--params", "70B", "--lora-rank", "abc"}, "--lora-rank"},
      {"plan_unknown_method", {"plan", "--params", "70B", "--method", "banana"}, "--method"},
      {"plan_negative_budget", {"plan", "--params", "70B", "--budget", "-3"}, "--budget"},
      {"plan_absurd_budget", {"plan", "--params", "70B", "--budget", "1e30"}, "--budget"},
      // oom
      {"oom_missing_log", {"oom", "--log", "{tmp}/missing"}, "{tmp}/missing"},
      {"oom_directory_log", {"oom", "--log", "{tmp}/adir"}, "{tmp}/adir"},
      {"oom_nul_bytes", {"oom", "--log", "{tmp}/nul.bin"}, "{tmp}/nul.bin"},
      {"oom_empty_log", {"oom", "--log", "{tmp}/empty"}, "{tmp}/empty"},
      {"oom_unknown_step", {"oom", "--done", "9z"}, "--done"},
      {"oom_unknown_result", {"oom", "--done", "1", "--result", "maybe"}, "--result"},
      {"oom_corrupt_state", {"oom", "--state", "{tmp}/nul.bin", "--done", "1"}, "{tmp}/nul.bin"},
      // flush
      {"flush_missing_root", {"--root", "{tmp}/missing", "flush", "--dry-run"}, "--root"},
      {"status_missing_root",
       {"--root", "{tmp}/missing", "status", "--gpu", "none"},
       "{tmp}/missing"},
      {"flush_unknown_flag", {"flush", "--now"}, "--now"},
      // sample
      {"sample_negative_interval",
       {"sample", "--interval", "-1", "--count", "1", "--gpu", "none"},
       "--interval"},
      {"sample_negative_count", {"sample", "--count", "-5", "--gpu", "none"}, "--count"},
      {"sample_absurd_count",
       {"sample", "--count", "99999999999999999999999", "--gpu", "none"},
       "--count"},
      {"sample_zero_interval",
       {"sample", "--interval", "0", "--count", "1", "--gpu", "none"},
       "--interval"},
      {"sample_wrong_type_interval",
       {"sample", "--interval", "abc", "--count", "1", "--gpu", "none"},
       "--interval"},
      {"sample_conflicting_count_duration",
       {"sample", "--count", "1", "--duration", "5s", "--gpu", "none"},
       "--count"},
      {"sample_unknown_format",
       {"sample", "--format", "xml", "--count", "1", "--gpu", "none"},
       "--format"},
      {"sample_out_is_directory",
       {"--root", idle, "sample", "--count", "1", "--gpu", "none", "--out", "{tmp}/adir"},
       "{tmp}/adir"},
      {"sample_out_in_missing_dir",
       {"--root", idle, "sample", "--count", "1", "--gpu", "none", "--out", "{tmp}/missing/x.log"},
       "{tmp}/missing/x.log"},
      {"sample_out_is_garbage",
       {"--root", idle, "sample", "--count", "1", "--gpu", "none", "--out", "{tmp}/nul.bin"},
       "{tmp}/nul.bin"},
      // analyze
      {"analyze_without_log", {"analyze"}, "--log"},
      {"analyze_missing_log", {"analyze", "--log", "{tmp}/missing"}, "{tmp}/missing"},
      {"analyze_directory_log", {"analyze", "--log", "{tmp}/adir"}, "{tmp}/adir"},
      {"analyze_binary_log", {"analyze", "--log", "{tmp}/nul.bin"}, "{tmp}/nul.bin"},
      {"analyze_empty_log", {"analyze", "--log", "{tmp}/empty"}, "{tmp}/empty"},
      {"analyze_non_utf8_log", {"analyze", "--log", "{tmp}/latin1"}, "{tmp}/latin1"},
      {"analyze_garbage_thermal",
       {"analyze", "--log", megatron, "--thermal", "{tmp}/nul.bin"},
       "{tmp}/nul.bin"},
      {"analyze_unknown_format", {"analyze", "--log", megatron, "--format", "bogus"}, "--format"},
      {"analyze_bad_start", {"analyze", "--log", megatron, "--start", "yesterday"}, "--start"},
      {"analyze_absurd_tz_offset",
       {"analyze", "--log", megatron, "--tz-offset", "+99:00"},
       "--tz-offset"},
      {"analyze_negative_slowdown",
       {"analyze", "--log", megatron, "--slowdown-factor", "-2"},
       "slowdown"},
      {"analyze_negative_sustain",
       {"analyze", "--log", megatron, "--sustain-steps", "-1"},
       "sustain"},
      {"analyze_absurd_warmup",
       {"analyze", "--log", megatron, "--warmup-steps", "1e99"},
       "--warmup-steps"},
      // procs
      {"procs_negative_need", {"--root", idle, "procs", "--need", "-4", "--gpu", "none"}, "--need"},
      {"procs_wrong_type_need",
       {"--root", idle, "procs", "--need", "banana", "--gpu", "none"},
       "--need"},
      {"procs_conflicting_need_plan",
       {"--root", idle, "procs", "--need", "4", "--plan", "--params", "7B", "--gpu", "none"},
       "--need"},
      {"procs_missing_gpu_apps",
       {"--root", idle, "procs", "--gpu-apps", "{tmp}/missing", "--gpu", "none"},
       "{tmp}/missing"},
      {"procs_garbage_gpu_apps",
       {"--root", idle, "procs", "--gpu-apps", "{tmp}/nul.bin", "--gpu", "none"},
       "{tmp}/nul.bin"},
      // serve
      {"serve_public_without_token", {"serve", "--listen", "0.0.0.0:9877"}, "0.0.0.0:9877"},
      {"serve_garbage_listen", {"serve", "--listen", "nonsense"}, "--listen"},
      {"serve_absurd_port", {"serve", "--listen", "127.0.0.1:99999"}, "--listen"},
      {"serve_negative_port", {"serve", "--listen", "127.0.0.1:-1"}, "--listen"},
      {"serve_missing_token", {"serve", "--token", "{tmp}/missing"}, "{tmp}/missing"},
      {"serve_empty_token", {"serve", "--token", "{tmp}/empty"}, "{tmp}/empty"},
      {"serve_negative_interval", {"serve", "--interval", "-5s"}, "--interval"},
      {"serve_negative_max_workloads", {"serve", "--max-workloads", "-1"}, "--max-workloads"},
      {"serve_textfile_missing_dir",
       {"serve", "--textfile", "{tmp}/missing/d", "--once", "--gpu", "none"},
       "{tmp}/missing/d"},
      {"serve_textfile_is_file",
       {"serve", "--textfile", "{tmp}/nul.bin", "--once", "--gpu", "none"},
       "{tmp}/nul.bin"},
      // watch
      {"watch_without_command", {"watch"}, "CMD"},
      {"watch_negative_interval", {"watch", "--interval", "-1", "--", "true"}, "--interval"},
      // top level
      {"unknown_subcommand", {"bogus"}, "bogus"},
  };
}

std::string expand(std::string s, const test::TempDir& tmp) {
  for (const auto& [key, value] :
       {std::pair<std::string, std::string>{"{tmp}", tmp.path().string()},
        {"{fx}", test::fixture("").string()}}) {
    for (auto at = s.find(key); at != std::string::npos; at = s.find(key))
      s.replace(at, key.size(), value);
  }
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

void make_inputs(const test::TempDir& tmp) {
  std::filesystem::create_directories(tmp / "adir");
  test::write_text(tmp / "empty", "");
  test::write_text(tmp / "nul.bin", std::string("garbage\0\xff\xfe\n", 11));
  test::write_text(tmp / "latin1", "\xc3\x28 caf\xe9 \xff not utf-8\n");
  std::filesystem::create_directories(tmp / "truncated");
  test::write_text(tmp / "truncated" / "config.json", R"({"hidden_size": 40)");
}

class BadInputTable : public ::testing::TestWithParam<BadInput> {};

TEST_P(BadInputTable, OneLineNamingTheProblemAndDocumentedExitCode) {
  const test::TempDir tmp;
  make_inputs(tmp);
  std::vector<std::string> args;
  for (const auto& a : GetParam().args) args.push_back(expand(a, tmp));
  const auto r = test::run_sparkops(args, {{"TZ", "UTC"}});
  EXPECT_LT(r.exit_code, 128) << "killed by a signal: " << r.err;
  EXPECT_EQ(r.exit_code, GetParam().exit_code) << r.err;
  EXPECT_TRUE(starts_with(r.err, "sparkops: ")) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(expand(GetParam().names, tmp)), std::string::npos)
      << "stderr does not name " << GetParam().names << ": " << r.err;
}

INSTANTIATE_TEST_SUITE_P(EverySubcommand, BadInputTable, ::testing::ValuesIn(table()),
                         [](const ::testing::TestParamInfo<BadInput>& p) { return p.param.name; });

// The config file is read by every subcommand: each bad form is one line and exit 2.
TEST(BadConfigFile, GarbageDirectoryAndMissingAreOneLineExitTwo) {
  const test::TempDir tmp;
  make_inputs(tmp);
  test::write_text(tmp / "wrong_type.toml", "[pool]\noverhead = [1, 2]\n");
  test::write_text(tmp / "huge_number.toml", "[sample]\nfsync_every = 99999999999999999999999\n");
  for (const std::string file :
       {"nul.bin", "latin1", "adir", "missing", "wrong_type.toml", "huge_number.toml"}) {
    const auto path = (tmp / file).string();
    const auto r = test::run_sparkops({"config"}, {{"SPARKOPS_CONFIG", path}});
    EXPECT_EQ(r.exit_code, 2) << file << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << file << ": " << r.err;
    EXPECT_NE(r.err.find(path), std::string::npos) << file << ": " << r.err;
  }
}

// A huge input (16 MiB of one line with no newline) must not crash or hang the parsers behind
// analyze and oom; whatever the verdict, it is not a signal.
TEST(HugeInput, SixteenMegabyteLineIsHandled) {
  const test::TempDir tmp;
  std::string big(16u << 20, 'x');
  test::write_text(tmp / "big.log", big);
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"analyze", "--log", (tmp / "big.log").string()},
                                             {"oom", "--log", (tmp / "big.log").string()}}) {
    const auto r = test::run_sparkops(args);
    EXPECT_LT(r.exit_code, 3) << args[0] << ": " << r.err;
    EXPECT_LE(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args[0] << ": " << r.err;
  }
}

}  // namespace
}  // namespace sparkops

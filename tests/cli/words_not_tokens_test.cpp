// Human output speaks words, not enum tokens: every command's text on the fixtures is free of the
// snake_case tokens its --json carries (wont_fit, fits_after_flush, cuda_allocator, ...), while the
// JSON keeps them for scripts.

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace sparkops {
namespace {

// Tokens of the verdict, OOM-kind, time-basis, time-source and thermal-format enums that are not
// already words.
const std::vector<std::string> kTokens{
    "wont_fit", "fits_after_flush", "stop_first", "does_not_fit", "not_oom", "cuda_allocator",
    "accelerator_runtime", "host_oom_killer", "cgroup_oom_killer", "server_admission",
    "log_timestamps", "start_flag", "file_mtime", "running_mean", "elapsed_delta", "wall_delta",
    "samples_rate", "nvidia_smi", "extended_csv",
    // NVML clocks-event reasons (gpu/throttle_reasons.hpp): status speaks them in words.
    "gpu_idle", "applications_clocks", "sw_power_cap", "hw_slowdown", "sync_boost", "sw_thermal",
    "hw_thermal", "hw_power_brake", "display_clock"};

bool word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '/' ||
         c == '.';
}

// The tokens `text` shows as whole words (a path that merely contains one does not count).
std::vector<std::string> tokens_in(const std::string& text) {
  std::vector<std::string> found;
  for (const auto& t : kTokens) {
    for (auto pos = text.find(t); pos != std::string::npos; pos = text.find(t, pos + 1)) {
      const bool before = pos > 0 && word_char(text[pos - 1]);
      const bool after = pos + t.size() < text.size() && word_char(text[pos + t.size()]);
      if (!before && !after) {
        found.push_back(t);
        break;
      }
    }
  }
  return found;
}

std::string root(const std::string& name) {
  return test::fixture("roots/" + name).string();
}

void expect_words(const std::vector<std::string>& args,
                  const std::map<std::string, std::string>& env = {}) {
  const auto r = test::run_sparkops(args, env);
  std::string what;
  for (const auto& a : args) what += " " + a;
  EXPECT_LT(r.exit_code, 4) << what << "\n" << r.err;
  EXPECT_EQ(tokens_in(r.out), std::vector<std::string>{}) << what << "\n" << r.out;
}

TEST(WordsNotTokens, PlanAndServingPlan) {
  for (const std::string r : {"gb10-idle", "x86-bare"}) {
    expect_words({"plan", "Llama-3.1-8B", "--root", root(r)});
    expect_words({"plan", "Llama-3.1-70B", "--method", "full", "--root", root(r)});
    expect_words(
        {"plan", "Qwen2.5-7B", "--batch", "1,2", "--seq", "1024,65536", "--root", root(r)});
    expect_words({"plan", "Llama-3.1-70B", "--serve", "vllm", "--root", root(r)});
    expect_words({"plan", "Llama-3.1-8B", "--serve", "vllm", "--root", root(r)});
  }
}

TEST(WordsNotTokens, ProcsAndStatus) {
  const std::string orphan = test::fixture("procs/vllm_uncapped_orphan").string();
  expect_words({"procs", "--root", orphan, "--gpu-apps", orphan + "/gpu-apps.csv"});
  expect_words(
      {"procs", "--root", orphan, "--gpu-apps", orphan + "/gpu-apps.csv", "--need", "500"});
  expect_words({"status", "--root", orphan, "--gpu", "none"});
  expect_words({"status", "--root", root("gb10-idle"), "--gpu", "none"});
}

// The GB10 scenarios' counters say the clocks were held back since driver load (software power cap,
// software thermal slowdown): the reasons read as words, as nvml.h describes them.
TEST(WordsNotTokens, StatusThrottleReasons) {
  for (const std::string scenario : {"gb10", "gb10-counters-advancing"}) {
    const std::map<std::string, std::string> env{
        {"SPARKOPS_NVML_LIB", FAKE_NVML_LIB},
        {"FAKE_NVML_SCENARIO", test::fixture("nvml/" + scenario).string()}};
    expect_words({"status", "--root", root("gb10-throttled"), "--gpu", "nvml"}, env);
    const auto r =
        test::run_sparkops({"status", "--root", root("gb10-throttled"), "--gpu", "nvml"}, env);
    EXPECT_NE(r.out.find("throttled since driver load: software power cap"), std::string::npos)
        << scenario << "\n"
        << r.out;
  }
}

TEST(WordsNotTokens, OomOnEveryCorpusText) {
  const test::TempDir tmp;
  for (const auto& e : std::filesystem::directory_iterator(test::fixture("oom/corpus"))) {
    if (e.path().extension() != ".txt") continue;
    expect_words({"oom", "--root", root("gb10-idle"), "--log", e.path().string(), "--state",
                  (tmp / "ladder.json").string()});
  }
}

TEST(WordsNotTokens, AnalyzeOnEveryLog) {
  for (const auto& e : std::filesystem::directory_iterator(test::fixture("logs"))) {
    const auto ext = e.path().extension();
    if (ext != ".log" && ext != ".jsonl") continue;
    expect_words({"analyze", "--log", e.path().string()});
  }
  expect_words({"analyze", "--log", test::fixture("watch/hf_trainer_head.log").string(),
                "--thermal", test::fixture("sample/thermal-sample-nvidia-smi.log").string()});
}

TEST(WordsNotTokens, TheCheckCatchesAToken) {
  EXPECT_EQ(tokens_in("Verdict  wont_fit\n"), std::vector<std::string>{"wont_fit"});
  EXPECT_EQ(tokens_in("Log  /tmp/a_wont_fit_b.log\n"), std::vector<std::string>{});
}

}  // namespace
}  // namespace sparkops

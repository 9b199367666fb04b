// The server's OOM ladder end to end: every server failure text of the corpus
// (tests/fixtures/serving/oom) gets the server's steps, in order, with the values the text states.

#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

namespace sparkops::ladder {
namespace {

using test::run_sparkops;

struct Scratch {
  test::TempDir dir;
  Scratch() {
    test::write_text(dir / "root/proc/meminfo",
                     "MemTotal:       125388000 kB\nMemFree:         41943040 kB\n"
                     "MemAvailable:   118566368 kB\nCached:          62914560 kB\n");
    test::write_text(dir / "root/proc/sys/vm/drop_caches", "0\n");
  }
  std::string root() const { return (dir / "root").string(); }
  std::string state() const { return (dir / "ladder.json").string(); }
};

std::string text(std::string_view name) {
  return test::fixture("serving/oom/" + std::string(name)).string();
}

nlohmann::json oom_json(const Scratch& s, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"--root", s.root(), "oom", "--state", s.state(), "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_sparkops(args);
  EXPECT_LT(r.exit_code, 2) << r.err;
  return nlohmann::json::parse(r.out.empty() ? "{}" : r.out);
}

TEST(ServerLadder, EveryServerFailureTextGetsTheServersSteps) {
  std::size_t failures = 0;
  for (const auto& e : std::filesystem::directory_iterator(test::fixture("serving/oom"))) {
    const auto name = e.path().filename().string();
    if (name == "vllm-startup-memory-line-gpu-mem-util-0.87.txt") continue;  // a healthy start
    Scratch s;
    const auto j = oom_json(s, {"--log", e.path().string()});
    ASSERT_TRUE(j.contains("ladder")) << name;
    EXPECT_EQ(j["ladder"], "server") << name;
    EXPECT_EQ(j["next_step"]["id"], "1") << name;
    // After the flush comes 2s, never a training step.
    const auto after = oom_json(s, {"--log", e.path().string(), "--done", "1"});
    EXPECT_EQ(after["next_step"]["id"], "2s") << name;
    const auto cap = oom_json(s, {"--log", e.path().string(), "--done", "2s"});
    EXPECT_EQ(cap["next_step"]["id"], "3s") << name;
    ++failures;
  }
  EXPECT_EQ(failures, 12u);
}

TEST(ServerLadder, RefusesToSkipAndKeepsOneStateFile) {
  Scratch s;
  const auto log = text("vllm-startup-valueerror-free-memory-uma.txt");
  const auto r =
      run_sparkops({"--root", s.root(), "oom", "--log", log, "--state", s.state(), "--done", "3s"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("step 1"), std::string::npos) << r.err;
  // A training step does not apply to a server.
  const auto t =
      run_sparkops({"--root", s.root(), "oom", "--log", log, "--state", s.state(), "--done", "2a"});
  EXPECT_NE(t.exit_code, 0);
  EXPECT_NE(t.err.find("does not apply"), std::string::npos) << t.err;
}

TEST(ServerLadder, ExactValuesFromTheFailureText) {
  Scratch s;
  const auto log = text("vllm-startup-valueerror-free-memory-uma.txt");
  oom_json(s, {"--log", log, "--done", "1"});
  oom_json(s, {"--log", log, "--done", "2s"});
  const auto j = oom_json(s, {"--log", log});
  ASSERT_EQ(j["next_step"]["id"], "3s");
  // 74.9 of 142.5 GiB free: 0.52 passes vLLM's start-up check.
  bool found = false;
  for (const auto& c : j["next_step"]["changes"]) {
    if (c.get<std::string>() == "--gpu-memory-utilization 0.52") found = true;
  }
  EXPECT_TRUE(found) << j.dump(2);
}

TEST(ServerLadder, ServingPlanGivesTheContextThatFits) {
  Scratch s;
  const auto log = text("vllm_no_available_memory_for_cache_blocks_negative_kv.txt");
  oom_json(s, {"--log", log, "--done", "1"});
  const auto j = oom_json(
      s, {"--log", log, "Llama-3.1-8B", "--serve", "vllm", "--serve-args",
          "--max-model-len 131072 --gpu-memory-utilization 0.2", "--device-total", "121.69"});
  ASSERT_EQ(j["next_step"]["id"], "2s") << j.dump(2);
  const auto action = j["next_step"]["action"].get<std::string>();
  EXPECT_NE(action.find("--max-model-len"), std::string::npos) << action;
}

TEST(ServerLadder, TrainingTextsKeepTheTrainingLadder) {
  Scratch s;
  const auto j = oom_json(
      s, {"--log", test::fixture("oom/corpus/torch_newest_oom_wording_dataparallel_jupyter_"
                                 "midtraining.txt")
                       .string()});
  EXPECT_EQ(j["ladder"], "training");
  const auto after = oom_json(
      s, {"--log",
          test::fixture("oom/corpus/torch_newest_oom_wording_dataparallel_jupyter_midtraining.txt")
              .string(),
          "--done", "1"});
  EXPECT_EQ(after["next_step"]["id"], "2a");
}

}  // namespace
}  // namespace sparkops::ladder

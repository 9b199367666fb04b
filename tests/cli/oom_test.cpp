// `sparkops oom` and `sparkops flush` end to end: the binary against fixture roots and logs.

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/meminfo_text.hpp"
#include "support/test_support.hpp"

namespace sparkops {
namespace {

using test::run_sparkops;

using test::meminfo_text;

struct Scratch {
  test::TempDir dir;
  Scratch() {
    test::write_text(dir / "root/proc/meminfo", meminfo_text(41943040, 62914560));
    test::write_text(dir / "root/proc/sys/vm/drop_caches", "0\n");
  }
  std::string root() const { return (dir / "root").string(); }
  std::string state() const { return (dir / "ladder.json").string(); }
  // Output with the scratch path replaced, for golden files.
  std::string scrub(std::string text) const {
    const auto base = dir.path().string();
    for (auto at = text.find(base); at != std::string::npos; at = text.find(base)) {
      text.replace(at, base.size(), "SCRATCH");
    }
    return text;
  }
};

std::string corpus(std::string_view name) {
  return test::fixture("oom/corpus/" + std::string(name)).string();
}

TEST(OomCli, LoadPhaseOomJsonIsPinned) {
  Scratch s;
  const auto r =
      run_sparkops({"--root", s.root(), "oom", "--log",
                    corpus("hf_from_pretrained_load_oom_during_checkpoint_shards_gemma3.txt"),
                    "--state", s.state(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  test::expect_golden("golden/ladder/oom_hf_load.json", s.scrub(r.out));
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kind"], "cuda_allocator");
  EXPECT_EQ(j["phase"], "load");
  EXPECT_EQ(j["next_step"]["id"], "1");
}

TEST(OomCli, LoadPhaseOomPointsAtTheLoadTransientFirst) {
  Scratch s;
  const auto r = run_sparkops({"--root", s.root(), "oom", "--log",
                               corpus("llamacpp_cudamalloc_oom_model_load_systemd_service.txt"),
                               "--state", s.state()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  test::expect_golden("golden/ladder/oom_llamacpp_load.txt", s.scrub(r.out));
  EXPECT_LT(r.out.find("load transient"), r.out.find("Next: step 1"));
}

TEST(OomCli, StdinIsClassified) {
  Scratch s;
  const auto r =
      run_sparkops({"--root", s.root(), "oom", "--state", s.state(), "--json"}, {},
                   "Sep 30 kernel: Memory cgroup out of memory: Killed process 77 (python)\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kind"], "cgroup_oom_killer");
  EXPECT_EQ(j["process"], "python");
  EXPECT_EQ(j["pid"], 77);
}

TEST(OomCli, NotOomLeavesTheLadderAlone) {
  Scratch s;
  const auto r = run_sparkops(
      {"--root", s.root(), "oom", "--log",
       test::fixture("oom/not_oom/hf_trainer_qlora_qwen3-8b_rtx5000ada_nohup.log").string(),
       "--state", s.state(), "--json"});
  ASSERT_EQ(r.exit_code, 1) << r.err;  // no out-of-memory failure: the answer is "no"
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kind"], "not_oom");
  EXPECT_TRUE(j["next_step"].is_null());
  EXPECT_FALSE(std::filesystem::exists(s.state()));
}

TEST(OomCli, Xid31FaultIsReportedButTheLadderDoesNotApply) {
  Scratch s;
  const auto r = run_sparkops(
      {"--root", s.root(), "oom", "--log",
       test::fixture("oom/corpus/"
                     "driver_nvrm_xid31_mmu_fault_illegal_memory_access_preflight_a100_modal_not_"
                     "oom.txt")
           .string(),
       "--state", s.state(), "--json"});
  ASSERT_EQ(r.exit_code, 1) << r.err;  // no out-of-memory failure: the answer is "no"
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kind"], "driver");
  EXPECT_EQ(j["phase"], "load");
  EXPECT_FALSE(j["memory_exhausted"].get<bool>());
  EXPECT_FALSE(j["ladder_applies"].get<bool>());
  EXPECT_TRUE(j["next_step"].is_null());
  EXPECT_FALSE(std::filesystem::exists(s.state()));
}

TEST(OomCli, NearMissAndItsPhaseEvidenceAreShown) {
  Scratch s;
  const auto r = run_sparkops(
      {"--root", s.root(), "oom", "--log",
       test::fixture("oom/corpus/"
                     "NEGATIVE_jetson_orin_nvmap_error12_harmless_vllm_startup_warnings_safe_to_"
                     "ignore.txt")
           .string(),
       "--state", s.state()});
  ASSERT_EQ(r.exit_code, 1) << r.err;  // no out-of-memory failure: the answer is "no"
  EXPECT_NE(r.out.find("Failure: not an out-of-memory failure\n  near miss: NvMap error 12"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("phase load\n  phase evidence: \"During startup you may see:\""),
            std::string::npos)
      << r.out;
}

TEST(OomCli, BadInputIsOneLineAndExit2) {
  Scratch s;
  test::write_text(s.dir / "empty.log", "");
  test::write_text(s.dir / "junk.bin", std::string("\x7f"
                                                   "ELF\0\0\0\x01\x02",
                                                   9) +
                                           std::string(100, '\0'));
  for (const auto* name : {"empty.log", "junk.bin", "missing.log"}) {
    const auto r = run_sparkops(
        {"--root", s.root(), "oom", "--log", (s.dir / name).string(), "--state", s.state()});
    EXPECT_EQ(r.exit_code, 2) << name;
    EXPECT_EQ(r.err.rfind("sparkops: ", 0), 0U) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST(OomCli, CorruptStateIsReportedAndKept) {
  Scratch s;
  test::write_text(s.state(), "{\"version\": 1, \"steps\": [");
  const auto r = run_sparkops({"--root", s.root(), "oom", "--state", s.state(), "--done", "1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("corrupt ladder state"), std::string::npos) << r.err;
  EXPECT_EQ(test::slurp(s.state()), "{\"version\": 1, \"steps\": [");
  const auto f = run_sparkops({"--root", s.root(), "flush", "--state", s.state()});
  EXPECT_EQ(f.exit_code, 2);
  EXPECT_EQ(test::slurp(s.dir / "root/proc/sys/vm/drop_caches"), "0\n");  // nothing flushed
}

TEST(OomCli, DoneRefusesToSkipThenForceRecords) {
  Scratch s;
  const std::vector<std::string> plan = {"Llama-3.1-8B", "--method", "full",     "--batch", "4",
                                         "--seq",        "4096",     "--budget", "100"};
  auto args =
      std::vector<std::string>{"--root", s.root(), "oom", "--state", s.state(), "--done", "2b"};
  args.insert(args.end(), plan.begin(), plan.end());
  const auto refused = run_sparkops(args);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("step 1 (flush the page cache) has not been tried"), std::string::npos)
      << refused.err;
  EXPECT_FALSE(std::filesystem::exists(s.state()));

  auto done1 = std::vector<std::string>{"--root",  s.root(), "oom", "--state",
                                        s.state(), "--done", "1",   "--json"};
  done1.insert(done1.end(), plan.begin(), plan.end());
  const auto r1 = run_sparkops(done1);
  ASSERT_EQ(r1.exit_code, 0) << r1.err;
  const auto j = nlohmann::json::parse(r1.out);
  EXPECT_EQ(j["ladder_step"], "1");
  EXPECT_EQ(j["next_step"]["id"], "2a");  // packing before batch
  EXPECT_LT(j["next_step"]["values"]["seq"].get<int>(), 4096);
  EXPECT_EQ(j["next_step"]["values"]["batch"], 4);

  args.push_back("--force");
  const auto forced = run_sparkops(args);
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_NE(forced.out.find("forced past an untried step"), std::string::npos);
}

TEST(OomCli, QloraDequantOomSaysBf16LoraFits) {
  Scratch s;
  const auto r =
      run_sparkops({"--root", s.root(), "oom", "--log",
                    test::fixture("oom/synthetic/qlora_bnb_dequant_step.txt").string(), "--state",
                    s.state(), "Llama-3.1-8B", "--method", "qlora", "--budget", "100"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("phase step"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bf16 LoRA is estimated to fit"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not proof that the model does not fit"), std::string::npos);
}

TEST(FlushCli, DryRunShowsTheEstimateAndWritesNothing) {
  Scratch s;
  const auto r = run_sparkops({"--root", s.root(), "flush", "--dry-run"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  test::expect_golden("golden/ladder/flush_dry_run.txt", r.out);
  EXPECT_EQ(test::slurp(s.dir / "root/proc/sys/vm/drop_caches"), "0\n");
}

TEST(FlushCli, FlushWritesThreeUnderTheRootAndRecordsStepOne) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (the not-root path is tested in flush_test)";
  Scratch s;
  ASSERT_EQ(run_sparkops({"--root", s.root(), "oom", "--state", s.state(), "--log",
                          corpus("torch20_cuda_oom_old_parenthesized_wording_svd_decode.txt")})
                .exit_code,
            0);
  const auto r = run_sparkops({"--root", s.root(), "flush", "--state", s.state(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(test::slurp(s.dir / "root/proc/sys/vm/drop_caches").substr(0, 1), "3");
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["before"]["mem_free_bytes"], 41943040ULL * 1024);
  EXPECT_FALSE(j["after"].is_null());
  EXPECT_EQ(j["recorded_in"], s.state());
  const auto status = nlohmann::json::parse(
      run_sparkops({"--root", s.root(), "oom", "--state", s.state(), "--json"}).out);
  EXPECT_EQ(status["ladder_step"], "1");
}

}  // namespace
}  // namespace sparkops

namespace sparkops {
namespace {

// Classifying an OOM never writes the ladder state as a side effect (it used to create
// ./.sparkops/ladder.json in whatever directory the user stood in): only --done or --state does.
TEST(OomCli, ClassifyingAloneWritesNoLadderState) {
  const test::TempDir dir;
  test::write_text(dir / "root/proc/meminfo", meminfo_text(41943040, 62914560));
  const std::string log = test::fixture(
                              "oom/corpus/"
                              "hf_from_pretrained_load_oom_during_checkpoint_shards_gemma3.txt")
                              .string();
  const auto r =
      test::run_process({"/bin/sh", "-c",
                         "cd '" + dir.path().string() + "' && exec '" + test::sparkops_binary() +
                             "' --root '" + (dir / "root").string() + "' oom --log '" + log + "'"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("CUDA caching allocator out of memory"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir / ".sparkops"))
      << "state written without --done/--state";
}

}  // namespace
}  // namespace sparkops

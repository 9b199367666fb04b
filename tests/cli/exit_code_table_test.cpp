// README "Exit codes" is one table for every command. This test reads that table and runs every
// example it gives: each example in a row's "for example" cell has a case here that exits with
// the row's code, and every case here is an example in the README's row for its code (a case
// without a README example, or an example without a case, fails).

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "support/meminfo_text.hpp"
#include "support/test_support.hpp"

namespace sparkops {
namespace {

using Args = std::vector<std::string>;

struct Invocation {
  Invocation(Args a, std::map<std::string, std::string> e = {})
      : args(std::move(a)), env(std::move(e)) {}
  Args args;
  std::map<std::string, std::string> env;
};

struct Example {
  int code = 0;
  std::string readme;            // the example's words in README's table, verbatim
  std::vector<Invocation> runs;  // each must exit with `code`
};

std::string root(const std::string& name) {
  return test::fixture(name).string();
}

std::string gb10() {
  return root("roots/gb10-idle");
}

// The README table's rows: code -> the examples of its "for example" cell, split at "; ".
std::map<int, std::set<std::string>> readme_examples() {
  const std::string text = test::slurp(std::filesystem::path(SPARKOPS_SOURCE_DIR) / "README.md");
  std::map<int, std::set<std::string>> rows;
  const auto section = text.find("### Exit codes");
  EXPECT_NE(section, std::string::npos);
  std::size_t pos = section;
  while (pos < text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.rfind("## ", 0) == 0) break;
    if (line.rfind("| `", 0) != 0) continue;
    // | `N` | meaning | for example |
    const int code = std::stoi(line.substr(3));
    const auto last_bar = line.rfind(" |");
    const auto cell_start = line.rfind(" | ", last_bar - 1);
    std::string cell = line.substr(cell_start + 3, last_bar - cell_start - 3);
    std::set<std::string>& examples = rows[code];
    std::size_t from = 0;
    while (from < cell.size()) {
      const std::size_t semi = std::min(cell.find("; ", from), cell.size());
      examples.insert(cell.substr(from, semi - from));
      from = semi + 2;
    }
  }
  return rows;
}

std::vector<Example> examples(const test::TempDir& dir) {
  const std::string bad_meminfo = (dir / "bad-meminfo").string();
  test::write_text(dir / "bad-meminfo/proc/meminfo", "garbage\n");
  const std::string no_meminfo = (dir / "no-meminfo").string();
  test::write_text(dir / "no-meminfo/proc/stat", "cpu 0 0 0 0\n");
  test::write_text(dir / "typo.toml", "[pool]\noverheed = \"6GiB\"\n");
  const std::string oom_root = (dir / "oom").string();
  test::write_text(dir / "oom/proc/meminfo", test::meminfo_text(41943040, 62914560));
  const std::string state = (dir / "ladder.json").string();
  const std::string lora = root("procs/vllm_capped_lora");
  const std::string lora_apps = lora + "/gpu-apps.csv";
  const std::string uncapped = root("procs/vllm_uncapped_orphan");
  const Args qlora7b{"plan", "--params", "7B", "--method", "qlora"};
  const auto plan_with = [&](std::initializer_list<std::string> more) {
    Args a{"--root", gb10()};
    a.insert(a.end(), qlora7b.begin(), qlora7b.end());
    a.insert(a.end(), more);
    return a;
  };
  return {
      // 0
      {0, "`plan`: it fits", {{plan_with({"--budget", "20"})}}},
      {0,
       "`procs --need`: it coexists",
       {{{"--root", gb10(), "procs", "--need", "100", "--gpu", "none"}},
        {{"--root", lora, "procs", "--gpu-apps", lora_apps, "--need", "4"}}}},
      {0,
       "`oom`: the next ladder step",
       {{{"--root", oom_root, "oom", "--state", state, "--log",
          root("oom/corpus/hf_from_pretrained_load_oom_during_checkpoint_shards_gemma3.txt")}}}},
      // 1
      {1, "`plan`: won't fit", {{plan_with({"--budget", "8"})}}},
      {1,
       "`plan --beside`: stop something first",
       {{plan_with({"--budget", "100", "--beside", "vllm serve Qwen/Qwen3-8B"})}}},
      {1,
       "`procs --need`: stop something first",
       {{{"--root", uncapped, "procs", "--gpu-apps", uncapped + "/gpu-apps.csv", "--need", "4"}},
        {{"--root", lora, "procs", "--gpu-apps", lora_apps, "--need", "60"}}}},
      {1,
       "`procs`: the workloads' claims exceed the pool (oversubscribed)",
       {{{"--root", lora, "procs", "--gpu-apps", lora_apps, "--overhead", "70"}}}},
      {1,
       "`oom`: no out-of-memory failure in the text",
       {{{"--root", oom_root, "oom", "--state", state, "--log",
          root("oom/not_oom/hf_trainer_qlora_qwen3-8b_rtx5000ada_nohup.log")}}}},
      {1,
       "an unreadable or malformed `/proc/meminfo`",
       {{{"--root", bad_meminfo, "plan", "Llama-3.1-8B", "--gpu", "none"}},
        {{"--root", bad_meminfo, "procs", "--need", "4", "--gpu", "none"}},
        {{"--root", bad_meminfo, "status", "--gpu", "none"}},
        {{"--root", no_meminfo, "plan", "Llama-3.1-8B", "--gpu", "none"}},
        {{"--root", no_meminfo, "status", "--gpu", "none"}}}},
      // 2
      {2,
       "an unknown flag",
       {{{"status", "--frobnicate"}}, {{"plan", "Llama-3.1-8B", "--frobnicate"}}}},
      {2,
       "a missing `--log` file",
       {{{"analyze", "--log", (dir / "missing.log").string()}},
        {{"--root", oom_root, "oom", "--log", (dir / "missing.log").string()}}}},
      {2,
       "a typo in a config file",
       {{{"--root", gb10(), "status", "--gpu", "none"},
         {{"SPARKOPS_CONFIG", (dir / "typo.toml").string()}}}}},
      {2, "`--json` to `top` or `serve`", {{{"top", "--json"}}, {{"serve", "--json"}}}},
      // 3
      {3, "`plan`: tight", {{plan_with({"--budget", "16"})}}},
      // A 50B QLoRA (39.0 GiB) beside a vLLM capped at 0.6 (claims 75.0 GiB): 3.7 GiB to spare.
      {3,
       "`plan --beside`: tight",
       {{{"--root", gb10(), "plan", "--params", "50B", "--method", "qlora", "--budget", "100",
          "--beside", "vllm serve Qwen/Qwen3-8B --gpu-memory-utilization 0.6"}}}},
      {3,
       "`procs --need`: tight",
       {{{"--root", gb10(), "procs", "--need", "105", "--gpu", "none"}}}},
  };
}

std::string joined(const Args& args) {
  std::string out;
  for (const auto& a : args) out += (out.empty() ? "" : " ") + a;
  return out;
}

TEST(ExitCodeTable, EveryExampleInTheReadmeExitsWithItsCode) {
  const test::TempDir dir;
  for (const Example& e : examples(dir)) {
    for (const Invocation& run : e.runs) {
      const auto r = test::run_sparkops(run.args, run.env);
      EXPECT_EQ(r.exit_code, e.code) << e.readme << ": sparkops " << joined(run.args) << "\n"
                                     << r.out << r.err;
    }
  }
}

TEST(ExitCodeTable, TheReadmeTableAndTheseCasesListTheSameExamples) {
  const test::TempDir dir;
  std::map<int, std::set<std::string>> tested;
  for (const Example& e : examples(dir)) tested[e.code].insert(e.readme);
  const auto readme = readme_examples();
  for (const int code : {0, 1, 2, 3}) {
    ASSERT_TRUE(readme.count(code)) << "README has no row for " << code;
    for (const auto& example : readme.at(code)) {
      EXPECT_TRUE(tested[code].count(example))
          << "README's example for " << code << " has no case here: " << example;
    }
    for (const auto& example : tested[code]) {
      EXPECT_TRUE(readme.at(code).count(example))
          << "a case for " << code << " is not in README's table: " << example;
    }
  }
}

}  // namespace
}  // namespace sparkops

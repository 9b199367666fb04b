// The command line as a user meets it: global options before or after the command, --help in
// user terms with the global options and an example on every command, `sparkops help`, a config
// typo that does not block --help/--version/`config`, the man page and the shell completions.

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/fake_nvml.hpp"
#include "support/test_support.hpp"

namespace sparkops {
namespace {

const std::vector<std::string> kCommands{"status", "config",  "serve",     "sample", "plan",
                                         "procs",  "analyze", "oom",       "flush",  "watch",
                                         "top",    "help",    "completion"};
const std::vector<std::string> kGlobal{"--root", "--json",     "--quiet",
                                       "--gpu",  "--no-color", "--config"};

std::string root(const char* name) {
  return test::fixture(std::string("roots/") + name).string();
}

// status --json without the two fields that change between runs.
nlohmann::json stable_status(const std::string& out) {
  auto j = nlohmann::json::parse(out);
  j.erase("taken_at");
  return j;
}

TEST(FlagsAnywhere, GlobalOptionsBeforeAndAfterTheCommandAgree) {
  const auto before =
      test::run_sparkops({"--root", root("gb10-idle"), "--json", "--gpu", "none", "status"});
  const auto after =
      test::run_sparkops({"status", "--root", root("gb10-idle"), "--json", "--gpu", "none"});
  const auto mixed =
      test::run_sparkops({"--gpu", "none", "status", "--json", "--root", root("gb10-idle")});
  ASSERT_EQ(before.exit_code, 0) << before.err;
  ASSERT_EQ(after.exit_code, 0) << after.err;
  ASSERT_EQ(mixed.exit_code, 0) << mixed.err;
  EXPECT_EQ(stable_status(before.out), stable_status(after.out));
  EXPECT_EQ(stable_status(before.out), stable_status(mixed.out));
  EXPECT_EQ(stable_status(after.out)["pool"]["total_bytes"], 127600748ULL * 1024);
}

TEST(FlagsAnywhere, JsonBeforeTheCommandWorksForEveryJsonCommand) {
  const auto plan = test::run_sparkops({"--json", "plan", "--list"});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_TRUE(nlohmann::json::accept(plan.out)) << plan.out;
  const auto config = test::run_sparkops({"--json", "config"});
  ASSERT_EQ(config.exit_code, 0) << config.err;
  EXPECT_TRUE(nlohmann::json::accept(config.out)) << config.out;
}

// --json is global, but top draws a terminal view and serve runs a server: neither has a
// document, so --json is refused in one line (exit 2) rather than silently ignored.
TEST(FlagsAnywhere, JsonIsRefusedByCommandsWithoutADocument) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--json", "top", "--once"},
           {"top", "--once", "--json"},
           {"serve", "--json"},
           {"--json", "serve", "--textfile", "/nonexistent/x.prom"}}) {
    const auto r = test::run_sparkops(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[1] << ": " << r.out << r.err;
    EXPECT_EQ(r.out, "") << args[1];
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("--json"), std::string::npos) << r.err;
  }
  EXPECT_NE(test::run_sparkops({"serve", "--json"}).err.find("/api/status"), std::string::npos);
}

TEST(FlagsAnywhere, RootFromTheEnvironmentIsCheckedLikeTheFlag) {
  const auto r = test::run_sparkops({"status", "--gpu", "none"},
                                    {{"SPARKOPS_ROOT", "/nonexistent/sparkops-root"}});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("SPARKOPS_ROOT"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// SPARKOPS_GPU_BACKEND picks the source when --gpu is not given; --gpu wins when it is.
TEST(FlagsAnywhere, GpuBackendVariableAppliesWithoutTheFlag) {
  auto env = test::fake_nvml_env("gb10");
  env["SPARKOPS_GPU_BACKEND"] = "none";
  auto r = test::run_sparkops({"status", "--json", "--root", root("gb10-idle")}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(nlohmann::json::parse(r.out)["gpu"]["backend"], "nvml") << r.out;
  r = test::run_sparkops({"status", "--json", "--root", root("gb10-idle"), "--gpu", "nvml"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["gpu"]["backend"], "nvml") << r.out;
}

TEST(Help, EveryCommandListsTheGlobalOptionsAndAnExample) {
  for (const auto& cmd : kCommands) {
    const auto r = test::run_sparkops({cmd, "--help"});
    ASSERT_EQ(r.exit_code, 0) << cmd << ": " << r.err;
    EXPECT_NE(r.out.find("Global options"), std::string::npos) << cmd;
    for (const auto& g : kGlobal) EXPECT_NE(r.out.find(g), std::string::npos) << cmd << " " << g;
    EXPECT_NE(r.out.find("Example:\n  sparkops " + cmd), std::string::npos) << cmd << "\n" << r.out;
  }
}

// No parser internals: CLI11's type names, ranges, "=default" and Excludes/Needs lists.
TEST(Help, SpeaksUserTermsNotParserInternals) {
  for (const auto& cmd : kCommands) {
    const auto r = test::run_sparkops({cmd, "--help"});
    for (const char* internal : {":UINT", " TEXT", ":INT", "FLOAT", "Excludes:", "Needs:", " in [",
                                 "=auto", "=lora", "=0", "(Env:", "REQUIRED"}) {
      EXPECT_EQ(r.out.find(internal), std::string::npos) << cmd << ": " << internal << "\n"
                                                         << r.out;
    }
  }
  const auto sample = test::run_sparkops({"sample", "--help"});
  EXPECT_NE(sample.out.find("--count N "), std::string::npos) << sample.out;
  const auto plan = test::run_sparkops({"plan", "--help"});
  EXPECT_NE(plan.out.find("--method METHOD"), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("(default lora)"), std::string::npos) << plan.out;
}

TEST(Help, HelpCommandMatchesDashDashHelp) {
  for (const std::string cmd : {"plan", "watch", "top"}) {
    const auto a = test::run_sparkops({"help", cmd});
    const auto b = test::run_sparkops({cmd, "--help"});
    ASSERT_EQ(a.exit_code, 0) << a.err;
    EXPECT_EQ(a.out, b.out) << cmd;
  }
  const auto all = test::run_sparkops({"help"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_EQ(all.out, test::run_sparkops({"--help"}).out);
  const auto bad = test::run_sparkops({"help", "frobnicate"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("frobnicate"), std::string::npos) << bad.err;
}

TEST(ConfigTypo, DoesNotBlockHelpVersionOrConfig) {
  test::TempDir dir;
  test::write_text(dir / "c.toml", "[pool]\noverheed = \"6GiB\"\n[thermal]\nhot_celsius = 85\n");
  const std::map<std::string, std::string> env{{"SPARKOPS_CONFIG", (dir / "c.toml").string()}};
  EXPECT_EQ(test::run_sparkops({"--help"}, env).exit_code, 0);
  EXPECT_EQ(test::run_sparkops({"status", "--help"}, env).exit_code, 0);
  EXPECT_EQ(test::run_sparkops({"help", "plan"}, env).exit_code, 0);
  EXPECT_EQ(test::run_sparkops({"--version"}, env).exit_code, 0);
  // `config` shows the values in effect (the bad file left out whole) and names the bad key.
  const auto c = test::run_sparkops({"config"}, env);
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_NE(c.out.find("pool.overhead"), std::string::npos) << c.out;
  EXPECT_NE(c.err.find("'pool.overheed'"), std::string::npos) << c.err;
  const auto j = test::run_sparkops({"config", "--json"}, env);
  EXPECT_EQ(j.exit_code, 2);
  const auto doc = nlohmann::json::parse(j.out);
  ASSERT_EQ(doc["problems"].size(), 1u);
  EXPECT_NE(doc["problems"][0].get<std::string>().find("overheed"), std::string::npos);
  // Every command that uses the configuration still refuses it.
  const auto s = test::run_sparkops({"status", "--gpu", "none"}, env);
  EXPECT_EQ(s.exit_code, 2);
  EXPECT_NE(s.err.find("overheed"), std::string::npos) << s.err;
}

TEST(ConfigFlag, ConfigFileFlagIsReadLastAndWinsOverTheVariable) {
  test::TempDir dir;
  test::write_text(dir / "env.toml", "[pool]\noverhead = \"6GiB\"\n");
  test::write_text(dir / "flag.toml", "[pool]\noverhead = \"3GiB\"\n");
  const auto r = test::run_sparkops({"status", "--json", "--gpu", "none", "--root",
                                     root("gb10-idle"), "--config", (dir / "flag.toml").string()},
                                    {{"SPARKOPS_CONFIG", (dir / "env.toml").string()}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["pool"]["overhead_bytes"], 3ULL << 30);
  const auto missing = test::run_sparkops({"config", "--config", (dir / "nope.toml").string()});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("nope.toml"), std::string::npos) << missing.err;
}

TEST(ConfigJson, ValuesAreTypedAndTheDocumentIsVersioned) {
  const auto r = test::run_sparkops({"config", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema_version"], 1);
  for (const auto& [name, key] : j["keys"].items()) {
    const std::string kind = key["kind"];
    if (kind == "number" || kind == "integer" || kind == "bytes" || kind == "duration") {
      EXPECT_TRUE(key["value"].is_number()) << name << ": " << key["value"];
    } else if (kind == "bool") {
      EXPECT_TRUE(key["value"].is_boolean()) << name;
    } else {
      EXPECT_TRUE(key["value"].is_string()) << name;
    }
  }
  EXPECT_EQ(j["keys"]["pool.overhead"]["value"], 4ULL << 30);
}

// The man page the build generated: one section per command, every flag of --help in it.
TEST(ManPage, BuiltPageHasEveryCommandAndFlag) {
  const std::string page =
      test::slurp(std::filesystem::path(SPARKOPS_GENERATED_DIR) / "man/sparkops.1");
  EXPECT_EQ(page, test::run_sparkops({"help", "--man"}).out);
  EXPECT_EQ(page.rfind(".TH SPARKOPS 1", 0), 0u);
  for (const auto& cmd : kCommands) {
    EXPECT_NE(page.find(".SS \"sparkops " + cmd), std::string::npos) << cmd;
  }
  for (const char* flag :
       {"\\-\\-root", "\\-\\-lora\\-rank", "\\-\\-need", "\\-\\-web.config.file", "\\-\\-once"}) {
    EXPECT_NE(page.find(flag), std::string::npos) << flag;
  }
  EXPECT_NE(page.find(".SH EXIT STATUS"), std::string::npos);
  if (std::filesystem::exists("/usr/bin/groff")) {
    const auto lint = test::run_process(
        {"/bin/sh", "-c",
         "groff -man -ww -z " +
             (std::filesystem::path(SPARKOPS_GENERATED_DIR) / "man/sparkops.1").string() +
             " 2>&1"});
    EXPECT_EQ(lint.out, "") << lint.out;
  }
}

// bash: source the generated script, set COMP_WORDS as readline would, call the function.
std::vector<std::string> bash_complete(const std::vector<std::string>& words) {
  std::string script = "source " +
                       (std::filesystem::path(SPARKOPS_GENERATED_DIR) / "bash/sparkops").string() +
                       "; COMP_WORDS=(";
  for (const auto& w : words) script += "'" + w + "' ";
  script += "); COMP_CWORD=" + std::to_string(words.size() - 1) +
            "; _sparkops; printf '%s\\n' \"${COMPREPLY[@]}\"";
  const auto r = test::run_process({"/bin/bash", "-c", script});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < r.out.size()) {
    const auto nl = r.out.find('\n', start);
    if (nl > start) out.push_back(r.out.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(Completion, BashCompletesCommandsFlagsValuesModelsAndFiles) {
  EXPECT_EQ(bash_complete({"sparkops", "pl"}), std::vector<std::string>{"plan"});
  EXPECT_TRUE(has(bash_complete({"sparkops", "plan", "--meth"}), "--method"));
  EXPECT_TRUE(has(bash_complete({"sparkops", "plan", "--ro"}), "--root"));  // global, after
  EXPECT_TRUE(has(bash_complete({"sparkops", "top", "--"}), "--once"));
  EXPECT_FALSE(has(bash_complete({"sparkops", "top", "--"}), "--method"));
  EXPECT_EQ(bash_complete({"sparkops", "plan", "--method", "q"}),
            std::vector<std::string>{"qlora"});
  EXPECT_TRUE(has(bash_complete({"sparkops", "--gpu", ""}), "nvidia-smi"));
  EXPECT_TRUE(has(bash_complete({"sparkops", "plan", "Llama-3.1-8"}), "Llama-3.1-8B"));
  EXPECT_EQ(bash_complete({"sparkops", "completion", "z"}), std::vector<std::string>{"zsh"});
  EXPECT_TRUE(has(bash_complete({"sparkops", "help", "wa"}), "watch"));
  const test::TempDir dir;
  test::write_text(dir / "train.log", "x\n");
  EXPECT_TRUE(has(bash_complete({"sparkops", "analyze", "--log", (dir / "tr").string()}),
                  (dir / "train.log").string()));
}

TEST(Completion, ZshAndFishScriptsParse) {
  EXPECT_EQ(test::run_sparkops({"completion", "tcsh"}).exit_code, 2);
  for (const auto& [shell, file] : std::vector<std::pair<std::string, std::string>>{
           {"zsh", "zsh/_sparkops"}, {"fish", "fish/sparkops.fish"}}) {
    const auto path = std::filesystem::path(SPARKOPS_GENERATED_DIR) / file;
    EXPECT_EQ(test::slurp(path), test::run_sparkops({"completion", shell}).out) << shell;
    for (const char* dir : {"/usr/bin/", "/bin/"}) {
      const std::string exe = std::string(dir) + shell;
      if (!std::filesystem::exists(exe)) continue;
      const auto r = test::run_process({exe, "-n", path.string()});
      EXPECT_EQ(r.exit_code, 0) << shell << ": " << r.err;
      break;
    }
  }
  const std::string fish = test::run_sparkops({"completion", "fish"}).out;
  EXPECT_NE(fish.find("-l method -r -f -a 'full lora qlora'"), std::string::npos);
  EXPECT_NE(fish.find("-a 'auto nvml nvidia-smi none'"), std::string::npos);
  const std::string zsh = test::run_sparkops({"completion", "zsh"}).out;
  EXPECT_NE(zsh.find("'--method[full | lora | qlora"), std::string::npos);
}

// README "Exit codes": one table for every command.
TEST(ExitCodes, TightIsThreeAndAnUnreadableMachineIsOne) {
  const auto tight =
      test::run_sparkops({"procs", "--root", root("gb10-idle"), "--need", "105", "--gpu", "none"});
  EXPECT_EQ(tight.exit_code, 3) << tight.out;
  EXPECT_NE(tight.out.find("tight"), std::string::npos) << tight.out;
  const auto fits =
      test::run_sparkops({"procs", "--root", root("gb10-idle"), "--need", "100", "--gpu", "none"});
  EXPECT_EQ(fits.exit_code, 0) << fits.out;
  // A malformed /proc/meminfo is the machine not being readable (1), not bad input (2).
  const test::TempDir dir;
  test::write_text(dir / "proc/meminfo", "garbage\n");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"plan", "Llama-3.1-8B"},
        std::vector<std::string>{"procs", "--need", "4"}, std::vector<std::string>{"status"}}) {
    std::vector<std::string> full = args;
    full.insert(full.end(), {"--root", dir.path().string(), "--gpu", "none"});
    const auto r = test::run_sparkops(full);
    EXPECT_EQ(r.exit_code, 1) << args[0] << ": " << r.err;
  }
}

}  // namespace
}  // namespace sparkops

namespace sparkops {
namespace {

// One size rule (README): bare, G and GiB are binary; GB is decimal. The help says so, and an
// error quotes the input once.
TEST(Sizes, OneRuleForBareGAndGiBAndGBIsDecimal) {
  const auto budget = [](const std::string& b) {
    const auto r = test::run_sparkops({"plan", "Llama-3.1-8B", "--budget", b, "--json"});
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 3) << r.err;
    return nlohmann::json::parse(r.out)["budget_bytes"].get<std::uint64_t>();
  };
  EXPECT_EQ(budget("24"), 24ULL << 30);
  EXPECT_EQ(budget("24G"), 24ULL << 30);
  EXPECT_EQ(budget("24GiB"), 24ULL << 30);
  EXPECT_EQ(budget("24GB"), 24'000'000'000ULL);
  const auto help = test::run_sparkops({"plan", "--help"});
  EXPECT_NE(help.out.find("24GB is 24 x 10^9"), std::string::npos) << help.out;
  const auto bad = test::run_sparkops({"plan", "Llama-3.1-8B", "--budget", "abc"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--budget: \"abc\" is not"), std::string::npos) << bad.err;
  EXPECT_EQ(bad.err.find("\"\"abc"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace sparkops

namespace sparkops {
namespace {

// `procs MODEL` without --plan used to ignore the model and answer as if none was given.
TEST(ProcsModel, ModelWithoutPlanIsRefusedWithTheFix) {
  const auto r = test::run_sparkops({"procs", "Llama-3.1-8B", "--root",
                                     test::fixture("roots/gb10-idle").string(), "--gpu", "none"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("--plan"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  const auto ok = test::run_sparkops({"procs", "--plan", "Llama-3.1-8B", "--root",
                                      test::fixture("roots/gb10-idle").string(), "--gpu", "none"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

}  // namespace
}  // namespace sparkops

namespace sparkops {
namespace {

// A captured --root tree never mixes in this machine's GPU (here: a fake nvidia-smi on PATH, as a
// real one would be): the GPU is "not read" unless a source is named.
TEST(CapturedRoot, NeverMixesInTheLiveGpuUnlessASourceIsNamed) {
  const test::TempDir dir;
  const std::map<std::string, std::string> env{
      {"PATH", std::string(FAKE_SMI_BIN_DIR) + ":/usr/bin:/bin"},
      {"FAKE_SMI_LOG", (dir / "calls.log").string()},
      {"FAKE_SMI_DIR", dir.path().string()}};
  const auto r = test::run_sparkops({"status", "--json", "--root", root("gb10-idle")}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto gpu = nlohmann::json::parse(r.out)["gpu"];
  EXPECT_NE(gpu["backend"], "nvidia-smi") << gpu;
  EXPECT_NE(gpu.dump().find("captured tree"), std::string::npos) << gpu;
  EXPECT_FALSE(std::filesystem::exists(dir / "calls.log")) << "the live nvidia-smi was run";
  const auto named = test::run_sparkops(
      {"status", "--json", "--root", root("gb10-idle"), "--gpu", "nvidia-smi"}, env);
  EXPECT_EQ(nlohmann::json::parse(named.out)["gpu"]["backend"], "nvidia-smi") << named.out;
  EXPECT_TRUE(std::filesystem::exists(dir / "calls.log"));
}

}  // namespace
}  // namespace sparkops

namespace sparkops {
namespace {

// People read words; scripts read the JSON tokens.
TEST(Words, PlanTextSaysWontFitInWordsAndJsonKeepsTheToken) {
  const std::vector<std::string> args{"plan", "Llama-3.1-70B", "--method",
                                      "full", "--budget",      "100"};
  const auto text = test::run_sparkops(args);
  EXPECT_EQ(text.exit_code, 1) << text.err;
  EXPECT_NE(text.out.find("won't fit"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("wont_fit"), std::string::npos) << text.out;
  auto json_args = args;
  json_args.push_back("--json");
  EXPECT_EQ(nlohmann::json::parse(test::run_sparkops(json_args).out)["verdict"], "wont_fit");
}

}  // namespace
}  // namespace sparkops

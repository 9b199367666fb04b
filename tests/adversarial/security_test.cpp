// Security promises (docs/reliability.md): no subcommand hands user text to a shell, only
// `flush` writes drop_caches and only as root, environ is read only through the prefix-filtering
// reader, and the exporter binds loopback by default and refuses a public bind without a token.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "host/proc_pid.hpp"
#include "support/background_process.hpp"
#include "support/test_support.hpp"

namespace sparkops {
namespace {

namespace fs = std::filesystem;

fs::path source_root() {
  return fs::path(SPARKOPS_SOURCE_ROOT);
}

// Source lines (comments stripped of // tails) matching `pattern` in src/, as "file:line: text".
std::vector<std::string> grep_src(const std::regex& pattern) {
  std::vector<std::string> hits;
  for (const auto& entry : fs::recursive_directory_iterator(source_root() / "src")) {
    const auto ext = entry.path().extension();
    if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp")) continue;
    std::ifstream in(entry.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      const auto comment = line.find("//");
      const std::string code = comment == std::string::npos ? line : line.substr(0, comment);
      if (std::regex_search(code, pattern)) {
        hits.push_back(fs::relative(entry.path(), source_root()).string() + ":" +
                       std::to_string(n) + ": " + line);
      }
    }
  }
  return hits;
}

TEST(NoShell, NoSubcommandPassesTextToAShell) {
  const auto hits = grep_src(
      std::regex(R"((^|[^_a-zA-Z.])(system|popen)\s*\(|"sh -c|/bin/sh|execl\s*\(|execlp\s*\()"));
  EXPECT_TRUE(hits.empty()) << ::testing::PrintToString(hits);
}

TEST(Flush, OnlyTheFlushModuleWritesDropCaches) {
  const auto hits = grep_src(std::regex("drop_caches"));
  for (const auto& h : hits) {
    const bool allowed =
        h.rfind("src/ladder/flush.cpp:", 0) == 0 || h.find("read") != std::string::npos;
    EXPECT_TRUE(allowed) << h;
  }
}

// As `nobody`, flush refuses and leaves drop_caches alone (the root is a scratch copy, so the
// test never touches the real machine even if the refusal breaks).
TEST(Flush, RefusesWithoutRoot) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run the child as nobody";
  const test::TempDir tmp;
  fs::copy(test::fixture("roots/gb10-idle"), tmp / "root", fs::copy_options::recursive);
  const auto drop = tmp / "root/proc/sys/vm/drop_caches";
  test::write_text(drop, "untouched\n");
  fs::permissions(tmp.path(), fs::perms::all);
  fs::permissions(drop, fs::perms::all);
  test::BackgroundOptions options;
  options.home = tmp.path();  // root's HOME is unreadable to nobody
  options.user = 65534;       // nobody
  test::BackgroundProcess flush({test::sparkops_binary(), "--root", (tmp / "root").string(),
                                 "flush", "--state", (tmp / "state.json").string()},
                                options);
  EXPECT_EQ(flush.wait(), 1) << "flush as nobody must refuse with exit 1";
  EXPECT_EQ(test::slurp(drop), "untouched\n");
}

TEST(Flush, DryRunWritesNothing) {
  const test::TempDir tmp;
  fs::copy(test::fixture("roots/gb10-idle"), tmp / "root", fs::copy_options::recursive);
  const auto drop = tmp / "root/proc/sys/vm/drop_caches";
  test::write_text(drop, "untouched\n");
  const auto r = test::run_sparkops({"--root", (tmp / "root").string(), "flush", "--dry-run"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(test::slurp(drop), "untouched\n");
}

TEST(Environ, OnlyTheHostReaderOpensEnvironAndItFiltersByPrefix) {
  const auto hits = grep_src(std::regex(R"("environ")"));
  for (const auto& h : hits) EXPECT_EQ(h.rfind("src/host/proc_pid.cpp:", 0), 0u) << h;
  const std::string text("CUDA_VISIBLE_DEVICES=0\0AWS_SECRET_ACCESS_KEY=hunter2\0HF_TOKEN=hf_x\0",
                         66);
  const auto env = host::parse_proc_environ(text, {"CUDA_"});
  ASSERT_EQ(env.size(), 1u);
  EXPECT_EQ(env[0].first, "CUDA_VISIBLE_DEVICES");
}

TEST(Serve, DefaultListenIsLoopback) {
  const auto r = test::run_sparkops({"config", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("127.0.0.1:"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("0.0.0.0"), std::string::npos) << r.out;
}

TEST(Serve, PublicBindWithoutTokenIsRefused) {
  for (const std::string addr : {"0.0.0.0:9877", "[::]:9877", "192.168.1.10:9877"}) {
    const auto r = test::run_sparkops({"serve", "--listen", addr});
    EXPECT_EQ(r.exit_code, 2) << addr << ": " << r.err;
    EXPECT_NE(r.err.find("--token"), std::string::npos) << addr << ": " << r.err;
  }
}

TEST(Serve, RequestAndConnectionBoundsAreSet) {
  // The bounds live in the server options; pin their presence and values in the source so a
  // refactor cannot silently drop them.
  EXPECT_FALSE(grep_src(std::regex(R"(set_payload_max_length\()")).empty());
  EXPECT_FALSE(grep_src(std::regex(R"(set_keep_alive_max_count\()")).empty());
  EXPECT_FALSE(grep_src(std::regex(R"(begin_head\(options_\.max_request_bytes)")).empty());
  EXPECT_FALSE(grep_src(std::regex(R"(connections_\.admit\()")).empty());
  EXPECT_TRUE(grep_src(std::regex(R"(\.Post\(|\.Put\(|\.Delete\(|\.Patch\()")).empty())
      << "the exporter serves nothing that changes state";
}

}  // namespace
}  // namespace sparkops

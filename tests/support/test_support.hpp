#pragma once
// Helpers every test uses: fixture paths, scratch directories, and running the sparkops binary.

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace sparkops::test {

// <source>/tests/fixtures/<relative>
std::filesystem::path fixture(std::string_view relative);
// <source>/../shared/corpus/<relative> when the shared corpus is beside the checkout; tests that
// need it copy what they pin into tests/fixtures, so this is for coverage sweeps only.
std::filesystem::path shared_corpus(std::string_view relative);
// Reads a whole file; fails the current test when it cannot.
std::string slurp(const std::filesystem::path& path);
void write_text(const std::filesystem::path& path, std::string_view text);
// An RFC 4180 CSV file (quoted fields may hold commas, doubled quotes and newlines) as rows of
// header -> value; fails the current test when it cannot be read.
std::vector<std::map<std::string, std::string>> read_csv(const std::filesystem::path& path);

// A fresh directory under the system temp dir, removed when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(std::string_view rel) const { return path_ / rel; }

 private:
  std::filesystem::path path_;
};

struct ProcessResult {
  int exit_code = -1;  // 128+n when killed by signal n
  std::string out;
  std::string err;
};

// Runs argv (argv[0] a path) with the given extra environment (overrides; "" value unsets) and
// optional stdin text. HOME and XDG_CONFIG_HOME are pointed at an empty scratch dir and
// SPARKOPS_CONFIG/SPARKOPS_ROOT/COLUMNS are unset unless given, so no test reads the user's config.
ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& env = {},
                          std::string_view stdin_text = {});

// The sparkops binary built alongside the tests.
std::string sparkops_binary();
// run_process with sparkops_binary() prepended.
ProcessResult run_sparkops(const std::vector<std::string>& args,
                           const std::map<std::string, std::string>& env = {},
                           std::string_view stdin_text = {});

// Compares `actual` with the golden file tests/fixtures/<relative>. With SPARKOPS_UPDATE_GOLDEN=1
// in the environment, rewrites the golden file instead (and the test still passes).
void expect_golden(std::string_view relative, std::string_view actual);

// Polls (does not time anything): waits until `pred` holds, up to a generous bound (10 s in 5 ms
// steps), for tests that watch a background process reach a state.
template <class Pred>
bool eventually(Pred pred) {
  for (int i = 0; i < 2000; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds{5});
  }
  return false;
}

}  // namespace sparkops::test

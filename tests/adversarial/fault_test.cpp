// Injected faults and what each must not lose (docs/reliability.md): the GPU falling off the bus
// (fake NVML GPU_IS_LOST), the disk filling up under the sample file, a sensor directory vanishing
// mid-run. SIGKILL of the sampler is covered by tests/sampling
// (SigkillAtRandomMomentsLosesNoCompletedRow) and the wall clock jumping by
// tests/sampling/scheduler_test.cpp.
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/text.hpp"
#include "support/background_process.hpp"
#include "support/fake_nvml.hpp"
#include "support/test_support.hpp"

namespace sparkops {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at < text.size();) {
    const auto nl = text.find('\n', at);
    if (nl == std::string::npos) {
      out.push_back(text.substr(at));  // a torn last line
      break;
    }
    out.push_back(text.substr(at, nl - at));
    at = nl + 1;
  }
  return out;
}

// Data rows (not '#' comments, not the header) and whether every one has the header's cell count.
struct Rows {
  std::size_t count = 0;
  bool all_complete = true;
};
Rows check_rows(const std::string& text) {
  Rows r;
  const auto lines = lines_of(text);
  std::size_t header_commas = 0;
  bool have_header = false;
  for (const auto& l : lines) {
    if (l.empty() || l[0] == '#') continue;
    const auto commas = static_cast<std::size_t>(std::count(l.begin(), l.end(), ','));
    if (!have_header) {
      header_commas = commas;
      have_header = true;
      continue;
    }
    ++r.count;
    if (commas != header_commas) r.all_complete = false;
  }
  if (!text.empty() && text.back() != '\n') r.all_complete = false;
  return r;
}

// GPU_IS_LOST on ticks 3 and 4: every tick still writes a row (host columns kept), the loss is an
// event, and the process exits normally when the count is reached.
TEST(Faults, GpuLostKeepsEveryRowAndRecordsTheEvent) {
  const test::TempDir tmp;
  const auto out = tmp / "thermal.csv";
  const auto r = test::run_sparkops(
      {"--root", test::fixture("roots/gb10-finetune").string(), "sample", "--gpu", "nvml",
       "--count", "6", "--interval", "0.01", "--format", "extended", "--out", out.string()},
      test::fake_nvml_env("lost-after-2", {{"TZ", "UTC"}}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto rows = check_rows(test::slurp(out));
  EXPECT_EQ(rows.count, 6u);
  EXPECT_TRUE(rows.all_complete);
  EXPECT_NE(test::slurp(fs::path(out.string() + ".events")).find("cause=gpu_lost"),
            std::string::npos);
}

// A 64 KiB tmpfs fills up under the sample file: the sampler stops with one line naming the file,
// a code below 128, and every row already in the file stays whole (no torn row).
TEST(Faults, DiskFullStopsCleanlyWithoutTornRows) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounting a tmpfs needs root";
  const test::TempDir tmp;
  const auto mnt = tmp / "full";
  fs::create_directories(mnt);
  if (::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=64k") != 0) {
    GTEST_SKIP() << "mount -t tmpfs not permitted here (container without CAP_SYS_ADMIN)";
  }
  // Leave about 6 KiB free so the disk fills after a dozen rows, not after minutes.
  test::write_text(mnt / "ballast", std::string(58u * 1024u, 'x'));
  const auto out = mnt / "thermal.csv";
  const auto r = test::run_sparkops(
      {"--root", test::fixture("roots/gb10-finetune").string(), "sample", "--gpu", "none",
       "--count", "300", "--interval", "0.001", "--format", "extended", "--out", out.string()},
      {{"TZ", "UTC"}});
  const std::string text = fs::exists(out) ? test::slurp(out) : std::string();
  ::umount2(mnt.c_str(), MNT_DETACH);
  EXPECT_LT(r.exit_code, 128) << r.err;
  EXPECT_NE(r.exit_code, 0) << "a full disk is not success";
  EXPECT_NE(r.err.find(out.string()), std::string::npos) << r.err;
  const auto rows = check_rows(text);
  EXPECT_GT(rows.count, 0u);
  EXPECT_TRUE(rows.all_complete) << "last bytes: "
                                 << text.substr(text.size() > 200 ? text.size() - 200 : 0);
}

// The hwmon directory disappears (driver unloaded) while the sampler runs: it keeps sampling,
// writes every row and exits normally.
TEST(Faults, SensorDirectoryVanishingMidRunKeepsSampling) {
  const test::TempDir tmp;
  fs::copy(test::fixture("roots/gb10-finetune"), tmp / "root", fs::copy_options::recursive);
  const auto out = tmp / "thermal.csv";
  test::BackgroundOptions options;
  options.home = tmp.path();
  test::BackgroundProcess sampler(
      {test::sparkops_binary(), "--root", (tmp / "root").string(), "sample", "--gpu", "none",
       "--count", "8", "--interval", "0.2", "--format", "extended", "--out", out.string()},
      options);
  // Wait (bounded) for the first rows, then pull the sensors away.
  for (int i = 0; i < 600 && (!fs::exists(out) || check_rows(test::slurp(out)).count < 2); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::error_code ec;
  fs::remove_all(tmp / "root/sys/class/hwmon", ec);
  fs::remove_all(tmp / "root/sys/class/thermal", ec);
  EXPECT_EQ(sampler.wait(), 0);  // 128+n when killed by signal n
  const auto rows = check_rows(test::slurp(out));
  EXPECT_EQ(rows.count, 8u);
  EXPECT_TRUE(rows.all_complete);
}

// The file stops growing mid-run (RLIMIT_FSIZE set by the shell that starts the sampler, with
// SIGXFSZ ignored so each write fails with EFBIG, as a full disk fails with ENOSPC): the summary
// counts the rows that reached the file, not the ticks (the issue saw "601 rows" for 419 written).
TEST(Faults, SampleSummaryCountsTheRowsActuallyWritten) {
  const test::TempDir tmp;
  const auto out = tmp / "thermal.jsonl";
  const std::string bin = test::sparkops_binary();
  const auto r = test::run_process(
      {"/bin/sh", "-c", "trap '' XFSZ; ulimit -f 8; exec \"$0\" \"$@\"", bin, "--root",
       test::fixture("roots/gb10-finetune").string(), "sample", "--gpu", "none", "--count", "40",
       "--interval", "0.001", "--format", "jsonl", "--json", "--out", out.string()},
      {{"TZ", "UTC"}});
  EXPECT_EQ(r.exit_code, 1) << "rows left unwritten at exit are a failure: " << r.err;
  std::uint64_t in_file = 0;
  for (const auto& line : lines_of(test::slurp(out))) {
    if (line.find("\"mem_available_bytes\"") != std::string::npos) ++in_file;
  }
  ASSERT_GT(in_file, 0u);
  ASSERT_LT(in_file, 40u) << "the 4 KiB limit did not stop the file";
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["rows"], in_file) << r.out;
  EXPECT_EQ(j["rows_produced"], 40) << r.out;
  EXPECT_EQ(j["ticks"], 40) << r.out;
}

}  // namespace
}  // namespace sparkops

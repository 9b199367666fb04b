#include "sampling/appender.hpp"

#include <cerrno>
#include <filesystem>

#include <gtest/gtest.h>

#include "sampling/writers.hpp"
#include "support/test_support.hpp"

namespace sparkops::sampling {
namespace {

constexpr std::string_view kHeader = "timestamp,temperature.gpu,power.draw\n";
constexpr std::string_view kRow1 = "2025/11/09 09:26:12.345, 45, 11.23 W\n";
constexpr std::string_view kRow2 = "2025/11/09 09:26:42.345, 46, 11.50 W\n";

DurableAppender::HeaderCheck smi_check(const std::filesystem::path& path) {
  return [path](std::string_view head) {
    return check_existing_header(SampleFormat::nvidia_smi, head, path.string());
  };
}

Result<DurableAppender> open_smi(const std::filesystem::path& path, AppenderOptions options = {},
                                 OpenReport* report = nullptr) {
  return DurableAppender::open(path, std::string(kHeader), "", smi_check(path), std::move(options),
                               report);
}

TEST(DurableAppender, NewFileGetsTheHeaderThenRows) {
  test::TempDir dir;
  const auto path = dir / "thermal.log";
  OpenReport report;
  auto a = open_smi(path, {}, &report);
  ASSERT_TRUE(a) << a.error().detail;
  EXPECT_TRUE(report.created);
  a->append(std::string(kRow1));
  EXPECT_EQ(test::slurp(path), std::string(kHeader) + std::string(kRow1));
}

TEST(DurableAppender, ExistingFileWithSameHeaderIsAppendedTo) {
  test::TempDir dir;
  const auto path = dir / "thermal.log";
  test::write_text(path, std::string(kHeader) + std::string(kRow1));
  OpenReport report;
  auto a = open_smi(path, {}, &report);
  ASSERT_TRUE(a);
  EXPECT_FALSE(report.created);
  a->append(std::string(kRow2));
  EXPECT_EQ(test::slurp(path), std::string(kHeader) + std::string(kRow1) + std::string(kRow2));
}

TEST(DurableAppender, TornLastLineIsCutBeforeAppending) {
  test::TempDir dir;
  const auto path = dir / "thermal.log";
  test::write_text(path, std::string(kHeader) + std::string(kRow1) + "2025/11/09 09:26:42.345, 4");
  OpenReport report;
  auto a = open_smi(path, {}, &report);
  ASSERT_TRUE(a);
  EXPECT_EQ(report.torn_bytes_cut, 26U);
  a->append(std::string(kRow2));
  EXPECT_EQ(test::slurp(path), std::string(kHeader) + std::string(kRow1) + std::string(kRow2));
}

TEST(DurableAppender, TornHeaderStartsTheFileAgain) {
  test::TempDir dir;
  const auto path = dir / "thermal.log";
  test::write_text(path, "timestamp,temper");
  auto a = open_smi(path);
  ASSERT_TRUE(a);
  a->append(std::string(kRow1));
  EXPECT_EQ(test::slurp(path), std::string(kHeader) + std::string(kRow1));
}

TEST(DurableAppender, DifferentHeaderIsRefusedAndFileUntouched) {
  test::TempDir dir;
  const auto path = dir / "thermal.log";
  const std::string other = "step,loss\n1,2.5\n";
  test::write_text(path, other);
  auto a = open_smi(path);
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().code, Errc::conflict);
  EXPECT_NE(a.error().detail.find("different header"), std::string::npos) << a.error().detail;
  EXPECT_EQ(test::slurp(path), other);
}

TEST(DurableAppender, WriteFailureBuffersRowsAndRetriesInOrder) {
  test::TempDir dir;
  const auto path = dir / "thermal.log";
  bool disk_full = false;
  AppenderOptions options;
  options.write = [&](int fd, const void* data, std::size_t size) -> ssize_t {
    if (disk_full) {
      errno = ENOSPC;
      return -1;
    }
    return ::write(fd, data, size);
  };
  auto a = open_smi(path, options);
  ASSERT_TRUE(a);
  disk_full = true;
  const auto r1 = a->append(std::string(kRow1));
  ASSERT_TRUE(r1.failed_now.has_value());
  EXPECT_NE(r1.failed_now->detail.find("No space left"), std::string::npos)
      << r1.failed_now->detail;
  const auto r2 = a->append(std::string(kRow2));
  EXPECT_FALSE(r2.failed_now.has_value());  // one line per failure episode, not per row
  EXPECT_EQ(r2.buffered_rows, 2U);
  disk_full = false;
  const auto r3 = a->retry();
  EXPECT_TRUE(r3.recovered);
  EXPECT_EQ(r3.buffered_rows, 0U);
  EXPECT_EQ(test::slurp(path), std::string(kHeader) + std::string(kRow1) + std::string(kRow2));
}

TEST(DurableAppender, ShortWriteIsCutSoTheFileEndsOnAWholeRow) {
  test::TempDir dir;
  const auto path = dir / "thermal.log";
  bool short_once = false;
  AppenderOptions options;
  options.write = [&](int fd, const void* data, std::size_t size) -> ssize_t {
    if (short_once) {
      short_once = false;
      return ::write(fd, data, size / 2);
    }
    return ::write(fd, data, size);
  };
  auto a = open_smi(path, options);
  ASSERT_TRUE(a);
  short_once = true;
  const auto r = a->append(std::string(kRow1));
  EXPECT_TRUE(r.failed_now.has_value());
  EXPECT_EQ(test::slurp(path), std::string(kHeader));
  a->append(std::string(kRow2));
  EXPECT_EQ(test::slurp(path), std::string(kHeader) + std::string(kRow1) + std::string(kRow2));
}

TEST(DurableAppender, FullMemoryBufferDropsOldestRowsAndCountsThem) {
  test::TempDir dir;
  const auto path = dir / "thermal.log";
  bool disk_full = false;
  AppenderOptions options;
  options.memory_buffer_rows = 2;
  options.write = [&](int fd, const void* data, std::size_t size) -> ssize_t {
    if (disk_full) {
      errno = EIO;
      return -1;
    }
    return ::write(fd, data, size);
  };
  auto a = open_smi(path, options);
  ASSERT_TRUE(a);
  disk_full = true;
  a->append("r1\n");
  a->append("r2\n");
  const auto r = a->append("r3\n");
  EXPECT_EQ(r.buffered_rows, 2U);
  EXPECT_EQ(r.dropped_rows, 1U);
  disk_full = false;
  a->retry();
  EXPECT_EQ(test::slurp(path), std::string(kHeader) + "r2\nr3\n");
}

TEST(DurableAppender, ReopenAfterRotationStartsANewFileWithHeader) {
  test::TempDir dir;
  const auto path = dir / "thermal.log";
  auto a = open_smi(path);
  ASSERT_TRUE(a);
  a->append(std::string(kRow1));
  std::filesystem::rename(path, dir / "thermal.log.1");
  a->append(std::string(kRow2));  // still goes to the renamed file, as logrotate expects
  ASSERT_TRUE(a->reopen());
  a->append(std::string(kRow1));
  EXPECT_EQ(test::slurp(dir / "thermal.log.1"),
            std::string(kHeader) + std::string(kRow1) + std::string(kRow2));
  EXPECT_EQ(test::slurp(path), std::string(kHeader) + std::string(kRow1));
}

TEST(DurableAppender, ExtendedAppendWritesARestartMarker) {
  test::TempDir dir;
  const auto path = dir / "x.csv";
  FileMeta meta{"0.1.0", "spark", "6.11", "580", "NVIDIA GB10"};
  const auto check = [&](std::string_view head) {
    return check_existing_header(SampleFormat::extended, head, path.string());
  };
  {
    auto a = DurableAppender::open(path, format_file_header(SampleFormat::extended, meta),
                                   format_restart_marker(SampleFormat::extended, meta), check, {});
    ASSERT_TRUE(a);
  }
  meta.kernel = "6.12";  // rebooted into a new kernel: still the same columns
  auto b = DurableAppender::open(path, format_file_header(SampleFormat::extended, meta),
                                 format_restart_marker(SampleFormat::extended, meta), check, {});
  ASSERT_TRUE(b) << b.error().detail;
  const std::string text = test::slurp(path);
  EXPECT_NE(text.find("kernel=6.11"), std::string::npos);
  EXPECT_NE(text.rfind("# sparkops 0.1.0 host=spark kernel=6.12 driver=580 device=NVIDIA GB10\n"),
            std::string::npos);
}

}  // namespace
}  // namespace sparkops::sampling

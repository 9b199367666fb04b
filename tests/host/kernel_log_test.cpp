#include "host/kernel_log.hpp"

#include <filesystem>

#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace sparkops::host {

TEST(KmsgParse, SplitsHeaderAndSkipsDictionaryLines) {
  const auto records = parse_kmsg(
      "3,5123,5123456789,-;NVRM: nvCheckOkFailedNoLog: Check failed: Out of memory "
      "[NV_ERR_NO_MEMORY] (0x00000051)\n"
      " SUBSYSTEM=pci\n"
      " DEVICE=+pci:000f:01:00.0\n"
      "6,5124,5128948968,-,caller=T812;mlx5_core 0000:01:00.0 enp1s0f0np0: Link up\n",
      "/dev/kmsg");
  ASSERT_TRUE(records);
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ((*records)[0].priority, 3u);
  EXPECT_EQ((*records)[0].facility, 0u);
  EXPECT_EQ((*records)[0].seq, 5123u);
  EXPECT_EQ((*records)[0].timestamp_us, 5123456789u);
  EXPECT_EQ((*records)[0].message.rfind("NVRM: nvCheckOkFailedNoLog", 0), 0u);
  EXPECT_EQ((*records)[1].message, "mlx5_core 0000:01:00.0 enp1s0f0np0: Link up");
}

TEST(KmsgParse, UserspaceFacilityIsSplitFromLevel) {
  // systemd writes to /dev/kmsg with facility 3 (daemon): 30 = 3 << 3 | 6.
  const auto records = parse_kmsg("30,7,1000,-;systemd[1]: Started foo.\n", "/dev/kmsg");
  ASSERT_TRUE(records);
  EXPECT_EQ((*records)[0].priority, 6u);
  EXPECT_EQ((*records)[0].facility, 3u);
}

TEST(KmsgParse, RecordWithoutHeaderIsMalformedNamingTheLine) {
  const auto records = parse_kmsg("6,1,1,-;ok\nnot a record\n", "/dev/kmsg");
  ASSERT_FALSE(records);
  EXPECT_EQ(records.error().code, Errc::malformed);
  EXPECT_NE(records.error().detail.find("/dev/kmsg line 2"), std::string::npos);
}

TEST(KernLogParse, TakesTextAfterKernelTagAndUptimeStamp) {
  const auto records = parse_kern_log(
      "2026-11-28T09:37:55.512233+00:00 spark-7f3a kernel: [ 5123.456789] NVRM: Xid 31\n"
      "Nov 28 09:38:01 spark-7f3a kernel: Out of memory: Killed process 4242 (python3)\n"
      "\n"
      "free text without a tag\n");
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].timestamp_us, 5123456789u);
  EXPECT_EQ(records[0].message, "NVRM: Xid 31");
  EXPECT_FALSE(records[0].priority.has_value());
  EXPECT_FALSE(records[1].timestamp_us.has_value());
  EXPECT_EQ(records[1].message, "Out of memory: Killed process 4242 (python3)");
  EXPECT_EQ(records[2].message, "free text without a tag");
}

TEST(KernelLogRead, FallsBackToKernLogInFixtureRoot) {
  const auto log = read_kernel_log(HostRoot(test::fixture("roots/gb10-idle")), 1 << 20);
  ASSERT_TRUE(log);
  ASSERT_TRUE(log->has_value());
  EXPECT_EQ((*log)->source, KernelLogSource::kern_log_file);
  EXPECT_FALSE((*log)->truncated);
  ASSERT_EQ((*log)->records.size(), 4u);
  EXPECT_NE((*log)->records[2].message.find("NV_ERR_NO_MEMORY"), std::string::npos);
  EXPECT_TRUE((*log)->notes.empty());
}

TEST(KernelLogRead, CapturedKmsgFileIsParsedAsRecords) {
  test::TempDir dir;
  test::write_text(dir / "dev/kmsg", "6,1,100,-;first\n6,2,200,-;second\n");
  test::write_text(dir / "var/log/kern.log", "ignored\n");
  const auto log = read_kernel_log(HostRoot(dir.path()), 1 << 20);
  ASSERT_TRUE(log && log->has_value());
  EXPECT_EQ((*log)->source, KernelLogSource::kmsg);
  ASSERT_EQ((*log)->records.size(), 2u);
  EXPECT_EQ((*log)->records[1].seq, 2u);
}

TEST(KernelLogRead, KeepsTheNewestRecordsWithinMaxBytes) {
  test::TempDir dir;
  test::write_text(dir / "var/log/kern.log",
                   "h kernel: aaaaaaaaaa\nh kernel: bbbbbbbbbb\nh kernel: cccccccccc\n");
  const auto log = read_kernel_log(HostRoot(dir.path()), 25);
  ASSERT_TRUE(log && log->has_value());
  EXPECT_TRUE((*log)->truncated);
  ASSERT_FALSE((*log)->records.empty());
  EXPECT_EQ((*log)->records.back().message, "cccccccccc");
  EXPECT_NE((*log)->records.front().message, "aaaaaaaaaa");
}

TEST(KernelLogRead, NeitherSourceIsAbsent) {
  test::TempDir dir;
  const auto log = read_kernel_log(HostRoot(dir.path()), 1024);
  ASSERT_TRUE(log);
  EXPECT_FALSE(log->has_value());
}

TEST(KernelLogRead, UnusableKmsgFallsBackWithANote) {
  test::TempDir dir;
  std::filesystem::create_directories(dir / "dev/kmsg");  // neither a device nor a file
  test::write_text(dir / "var/log/kern.log", "h kernel: hello\n");
  const auto log = read_kernel_log(HostRoot(dir.path()), 1024);
  ASSERT_TRUE(log && log->has_value());
  EXPECT_EQ((*log)->source, KernelLogSource::kern_log_file);
  ASSERT_EQ((*log)->notes.size(), 1u);
  EXPECT_NE((*log)->notes[0].find("dev/kmsg"), std::string::npos);
}

}  // namespace sparkops::host

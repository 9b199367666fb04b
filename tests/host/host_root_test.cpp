#include "host/host_root.hpp"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace sparkops::host {
namespace {

// resolve() builds its text by hand; it must be the text of `root / rel` for every root form.
TEST(HostRootResolve, IsTheRootJoinedWithThePathAsOperatorSlashJoinsThem) {
  for (const char* root : {"/", "/tmp/x", "/tmp/x/", "fixtures/roots/gb10", "rel/", "//", "."}) {
    for (const char* path : {"/proc/meminfo", "proc/meminfo", "//sys//class/hwmon", "/", "",
                             "/sys/class/hwmon/hwmon3/../hwmon1/temp1_input", "/proc/12/stat"}) {
      std::string_view rel = path;
      while (!rel.empty() && rel.front() == '/') rel.remove_prefix(1);
      const auto expected = std::filesystem::path(root) / std::filesystem::path(std::string(rel));
      EXPECT_EQ(HostRoot(root).resolve(path).native(), expected.native()) << root << " " << path;
      EXPECT_EQ(HostRoot(root).resolve(path), expected) << root << " " << path;
    }
  }
  EXPECT_EQ(HostRoot("").resolve("/proc/meminfo").native(), "/proc/meminfo");
}

TEST(HostRootList, NamesSortedWithoutDotEntriesAndEveryKindOfEntry) {
  test::TempDir dir;
  std::filesystem::create_directories(dir / "sys/class/hwmon/hwmon1");
  std::filesystem::create_directory_symlink("hwmon1", dir / "sys/class/hwmon/hwmon0");
  { std::ofstream(dir / "sys/class/hwmon/b_file") << "x\n"; }
  const HostRoot root(dir.path());
  const auto names = root.list("/sys/class/hwmon");
  ASSERT_TRUE(names) << names.error().detail;
  EXPECT_EQ(*names, (std::vector<std::string>{"b_file", "hwmon0", "hwmon1"}));
  const auto missing = root.list("/sys/class/thermal");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, Errc::not_found);
  const auto file = root.list("/sys/class/hwmon/b_file");  // not a directory
  ASSERT_FALSE(file);
  EXPECT_EQ(file.error().code, Errc::not_found);
  EXPECT_NE(file.error().detail.find("cannot list"), std::string::npos);
}

}  // namespace
}  // namespace sparkops::host

#include "host/cgroup.hpp"

#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace sparkops::host {

TEST(CgroupParse, FindsTheV2LineAmongV1Lines) {
  // A hybrid host: v1 controllers plus the unified hierarchy.
  const auto path = parse_proc_self_cgroup(
      "12:memory:/user.slice\n"
      "1:name=systemd:/user.slice/user-1000.slice/session-2.scope\n"
      "0::/user.slice/user-1000.slice/session-2.scope\n");
  ASSERT_TRUE(path);
  EXPECT_EQ(*path, "/user.slice/user-1000.slice/session-2.scope");
}

TEST(CgroupParse, ContainerNamespaceRootIsSlash) {
  const auto path = parse_proc_self_cgroup("0::/\n");
  ASSERT_TRUE(path);
  EXPECT_EQ(*path, "/");
}

TEST(CgroupParse, V1OnlyIsNotFound) {
  const auto path = parse_proc_self_cgroup("4:memory:/docker/abc\n");
  ASSERT_FALSE(path);
  EXPECT_EQ(path.error().code, Errc::not_found);
}

TEST(CgroupParse, LineWithoutColonsIsMalformedNamingTheLine) {
  const auto path = parse_proc_self_cgroup("0::/ok\ngarbage\n");
  ASSERT_FALSE(path);
  EXPECT_EQ(path.error().code, Errc::malformed);
  EXPECT_NE(path.error().detail.find("line 2"), std::string::npos);
}

TEST(CgroupLimit, MaxIsAbsentAndNumberIsBytes) {
  const auto unlimited = parse_cgroup_limit("max\n", "memory.max");
  ASSERT_TRUE(unlimited);
  EXPECT_FALSE(unlimited->has_value());
  const auto limited = parse_cgroup_limit("34359738368\n", "memory.max");
  ASSERT_TRUE(limited);
  EXPECT_EQ(*limited, 34359738368ULL);
}

TEST(CgroupLimit, JunkIsMalformedNamingTheFile) {
  const auto junk = parse_cgroup_limit("lots\n", "/sys/fs/cgroup/memory.max");
  ASSERT_FALSE(junk);
  EXPECT_EQ(junk.error().code, Errc::malformed);
  EXPECT_NE(junk.error().detail.find("/sys/fs/cgroup/memory.max line 1"), std::string::npos);
}

TEST(CgroupRead, ContainerRootMapsToSysFsCgroup) {
  const auto cg = read_cgroup_memory(HostRoot(test::fixture("roots/container-cgroup")));
  ASSERT_TRUE(cg);
  ASSERT_TRUE(cg->has_value());
  EXPECT_EQ((*cg)->path, "/");
  EXPECT_EQ((*cg)->max_bytes, 32ULL << 30);
  EXPECT_FALSE((*cg)->high_bytes.has_value());
  EXPECT_EQ((*cg)->current_bytes, 6ULL << 30);
  EXPECT_EQ((*cg)->headroom_bytes(), 26ULL << 30);
}

TEST(CgroupRead, UnlimitedSessionHasNoHeadroom) {
  const auto cg = read_cgroup_memory(HostRoot(test::fixture("roots/gb10-idle")));
  ASSERT_TRUE(cg);
  ASSERT_TRUE(cg->has_value());
  EXPECT_EQ((*cg)->path, "/user.slice/user-1000.slice/session-3.scope");
  EXPECT_FALSE((*cg)->max_bytes.has_value());
  EXPECT_EQ((*cg)->current_bytes, 2147483648ULL);
  EXPECT_FALSE((*cg)->headroom_bytes().has_value());
}

TEST(CgroupRead, AncestorLimitBindsWhenTighter) {
  test::TempDir dir;
  test::write_text(dir / "proc/self/cgroup", "0::/user.slice/app.scope\n");
  test::write_text(dir / "sys/fs/cgroup/user.slice/app.scope/memory.max", "max\n");
  test::write_text(dir / "sys/fs/cgroup/user.slice/app.scope/memory.current", "1073741824\n");
  test::write_text(dir / "sys/fs/cgroup/user.slice/memory.max", "8589934592\n");
  test::write_text(dir / "sys/fs/cgroup/user.slice/memory.current", "2147483648\n");
  const auto cg = read_cgroup_memory(HostRoot(dir.path()));
  ASSERT_TRUE(cg);
  ASSERT_TRUE(cg->has_value());
  EXPECT_EQ((*cg)->path, "/user.slice/app.scope");
  EXPECT_EQ((*cg)->limit_path, "/user.slice");
  EXPECT_EQ((*cg)->headroom_bytes(), 6ULL << 30);
}

TEST(CgroupRead, HostPathNotMountedFallsBackToTheMountRoot) {
  // A container without a cgroup namespace sees the host path in /proc/self/cgroup.
  test::TempDir dir;
  test::write_text(dir / "proc/self/cgroup", "0::/system.slice/docker-abc.scope\n");
  test::write_text(dir / "sys/fs/cgroup/memory.max", "17179869184\n");
  const auto cg = read_cgroup_memory(HostRoot(dir.path()));
  ASSERT_TRUE(cg);
  ASSERT_TRUE(cg->has_value());
  EXPECT_EQ((*cg)->path, "/");
  EXPECT_EQ((*cg)->max_bytes, 16ULL << 30);
}

TEST(CgroupRead, NoCgroupFilesIsAbsent) {
  const auto cg = read_cgroup_memory(HostRoot(test::fixture("roots/x86-bare")));
  ASSERT_TRUE(cg);
  EXPECT_FALSE(cg->has_value());
}

TEST(CgroupRead, MalformedLimitIsAnError) {
  test::TempDir dir;
  test::write_text(dir / "proc/self/cgroup", "0::/\n");
  test::write_text(dir / "sys/fs/cgroup/memory.max", "32G\n");
  const auto cg = read_cgroup_memory(HostRoot(dir.path()));
  ASSERT_FALSE(cg);
  EXPECT_EQ(cg.error().code, Errc::malformed);
  EXPECT_NE(cg.error().detail.find("memory.max"), std::string::npos);
}

}  // namespace sparkops::host

// `sparkops flush` against a scratch root: writes "3", refuses without root and while a trainer
// runs, and a dry run only reads.

#include "ladder/flush.hpp"

#include <gtest/gtest.h>

#include "base/units.hpp"
#include "support/meminfo_text.hpp"
#include "support/test_support.hpp"

namespace sparkops::ladder {
namespace {

using test::meminfo_text;

struct Root {
  test::TempDir dir;
  Root() {
    test::write_text(dir / "proc/meminfo", meminfo_text(40ULL * 1024 * 1024, 60ULL * 1024 * 1024));
    test::write_text(dir / "proc/sys/vm/drop_caches", "0\n");
  }
  host::HostRoot host() const { return host::HostRoot(dir.path()); }
  std::string drop_caches() const { return test::slurp(dir / "proc/sys/vm/drop_caches"); }
};

TEST(Flush, WritesThreeAfterSyncAndReportsReclaimed) {
  Root root;
  std::vector<std::string> calls;
  FlushOptions options;
  options.privilege = Privilege::root;
  options.sync = [&] { calls.push_back("sync:" + root.drop_caches()); };
  options.after_write = [&] {
    calls.push_back("after:" + root.drop_caches());
    test::write_text(root.dir / "proc/meminfo",
                     meminfo_text(97ULL * 1024 * 1024, 3ULL * 1024 * 1024));
  };
  auto out = flush_page_cache(root.host(), options);
  ASSERT_TRUE(out.has_value()) << out.error().detail;
  ASSERT_EQ(calls.size(), 2U);
  EXPECT_EQ(calls[0], "sync:0\n");  // sync runs before the write
  EXPECT_EQ(root.drop_caches().substr(0, 1), "3");
  EXPECT_EQ(out->reclaimed_bytes, static_cast<std::int64_t>(57 * kGiB));
  EXPECT_EQ(out->estimate_bytes, 57 * kGiB);  // 60 cached - 1 shmem - 2 mapped
  ASSERT_TRUE(out->after.has_value());
  EXPECT_EQ(out->after->cached_bytes, 3 * kGiB);
}

TEST(Flush, RefusesWithoutRootAndWritesNothing) {
  Root root;
  FlushOptions options;
  options.privilege = Privilege::unprivileged;
  const auto out = flush_page_cache(root.host(), options);
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().code, Errc::permission_denied);
  EXPECT_NE(out.error().detail.find("sudo sparkops flush"), std::string::npos);
  EXPECT_EQ(root.drop_caches(), "0\n");
}

TEST(Flush, RefusesWhileATrainerRunsUnlessForced) {
  Root root;
  FlushOptions options;
  options.privilege = Privilege::root;
  options.running_trainers = {"4242 python train.py (TRL)"};
  const auto refused = flush_page_cache(root.host(), options);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, Errc::conflict);
  EXPECT_NE(refused.error().detail.find("4242 python train.py"), std::string::npos);
  EXPECT_EQ(root.drop_caches(), "0\n");
  options.force = Force::yes;
  const auto forced = flush_page_cache(root.host(), options);
  ASSERT_TRUE(forced.has_value());
  EXPECT_TRUE(forced->forced_past_trainer);
  EXPECT_EQ(root.drop_caches().substr(0, 1), "3");
}

TEST(Flush, DryRunNeedsNoRootAndOnlyReads) {
  Root root;
  FlushOptions options;
  options.mode = FlushMode::dry_run;
  bool synced = false;
  options.sync = [&] { synced = true; };
  const auto out = flush_page_cache(root.host(), options);
  ASSERT_TRUE(out.has_value());
  EXPECT_FALSE(synced);
  EXPECT_EQ(out->estimate_bytes, 57 * kGiB);
  EXPECT_FALSE(out->after.has_value());
  EXPECT_EQ(root.drop_caches(), "0\n");
}

TEST(Flush, EstimateIsNeverNegative) {
  host::Meminfo m;
  m.cached_bytes = kGiB;
  m.shmem_bytes = 2 * kGiB;
  EXPECT_EQ(flush_estimate_bytes(m), 0U);
  EXPECT_FALSE(flush_estimate_bytes(host::Meminfo{}).has_value());
}

TEST(Flush, MissingDropCachesIsAnError) {
  test::TempDir dir;
  test::write_text(dir / "proc/meminfo", meminfo_text(1024, 1024));
  FlushOptions options;
  options.privilege = Privilege::root;
  EXPECT_FALSE(flush_page_cache(host::HostRoot(dir.path()), options).has_value());
}

}  // namespace
}  // namespace sparkops::ladder

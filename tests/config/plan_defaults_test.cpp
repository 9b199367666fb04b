// The [plan] section as one typed value: the key table's defaults, a file's override, and a
// page_cache word that is neither resident nor dropped named with its key.

#include "config/plan_defaults.hpp"

#include <gtest/gtest.h>

namespace sparkops::config {
namespace {

TEST(PlanDefaults, TheKeyTablesDefaults) {
  const Config c;
  const auto d = plan_defaults(c);
  ASSERT_TRUE(d) << d.error().detail;
  EXPECT_EQ(d->framework, "hf");
  EXPECT_EQ(d->host.process_bytes, 1524160ULL * 1024);
  EXPECT_EQ(d->host.dataset_bytes, 0U);
  EXPECT_EQ(d->host.dataloader_workers, 0U);
  EXPECT_EQ(d->host.worker_bytes, 261064ULL * 1024);
  EXPECT_TRUE(d->host.page_cache_resident);
}

TEST(PlanDefaults, AFileOverridesThem) {
  Config c;
  ASSERT_TRUE(
      c.apply_toml("[plan]\nframework = \"unsloth\"\ndataloader_workers = 4\n"
                   "dataset = \"2GiB\"\npage_cache = \"dropped\"\n",
                   "user.toml"));
  const auto d = plan_defaults(c);
  ASSERT_TRUE(d) << d.error().detail;
  EXPECT_EQ(d->framework, "unsloth");
  EXPECT_EQ(d->host.dataloader_workers, 4U);
  EXPECT_EQ(d->host.dataset_bytes, 2ULL << 30);
  EXPECT_FALSE(d->host.page_cache_resident);
}

TEST(PlanDefaults, AnUnknownPageCacheWordNamesTheKey) {
  Config c;
  ASSERT_TRUE(c.apply_toml("[plan]\npage_cache = \"sometimes\"\n", "user.toml"));
  const auto d = plan_defaults(c);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().detail,
            "config plan.page_cache: unknown value \"sometimes\" (one of resident|dropped)");
}

}  // namespace
}  // namespace sparkops::config

#include "exporter/serve_session.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

namespace sparkops::exporter {
namespace {

using namespace std::chrono_literals;

TEST(PlanServe, EmptyFlagsTakeTheDefaults) {
  ServeDefaults defaults;
  defaults.listen = "127.0.0.1:9100";
  defaults.interval = 7s;
  defaults.max_workloads = 3;
  auto plan = plan_serve(ServeRequest{}, defaults);
  ASSERT_TRUE(plan) << plan.error().detail;
  EXPECT_TRUE(plan->listen.loopback);
  EXPECT_EQ(plan->listen.port, 9100);
  EXPECT_EQ(plan->interval, 7s);
  EXPECT_EQ(plan->history, 1h);
  EXPECT_EQ(plan->max_workloads, 3u);
  EXPECT_FALSE(plan->token);
  EXPECT_FALSE(plan->textfile);
}

TEST(PlanServe, NonLoopbackNeedsAuthenticationOrInsecure) {
  ServeRequest request;
  request.listen = "0.0.0.0:9877";
  auto refused = plan_serve(request, ServeDefaults{});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, Errc::invalid_argument);
  EXPECT_NE(refused.error().detail.find("is not loopback"), std::string::npos);
  request.insecure = true;
  EXPECT_TRUE(plan_serve(request, ServeDefaults{}));
}

TEST(PlanServe, RefusesWhatCannotBeServed) {
  ServeRequest fast;
  fast.interval = "50ms";
  EXPECT_EQ(plan_serve(fast, ServeDefaults{}).error().detail, "--interval: must be at least 100ms");
  ServeRequest once;
  once.once = true;
  EXPECT_EQ(plan_serve(once, ServeDefaults{}).error().detail, "--once needs --textfile DIR");
  ServeRequest many;
  many.max_workloads = "10001";
  EXPECT_EQ(plan_serve(many, ServeDefaults{}).error().detail, "--max-workloads: must be 0-10000");
  ServeRequest nodir;
  nodir.textfile_dir = "/nonexistent/sparkops-serve-test";
  EXPECT_NE(plan_serve(nodir, ServeDefaults{}).error().detail.find("not a directory"),
            std::string::npos);
}

TEST(PlanServe, TokenFileHoldsOneToken) {
  const auto dir = std::filesystem::temp_directory_path() / "sparkops-serve-session-test";
  std::filesystem::create_directories(dir);
  const auto file = dir / "token";
  ServeRequest request;
  request.listen = "0.0.0.0:9877";
  request.token_file = file.string();
  std::ofstream(file) << "s3cret\n";
  auto plan = plan_serve(request, ServeDefaults{});
  ASSERT_TRUE(plan) << plan.error().detail;
  EXPECT_EQ(plan->token, "s3cret");
  std::ofstream(file) << "two words\n";
  EXPECT_NE(plan_serve(request, ServeDefaults{}).error().detail.find("one token, no spaces"),
            std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sparkops::exporter

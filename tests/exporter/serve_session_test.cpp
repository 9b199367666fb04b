#include "exporter/serve_session.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "config/config.hpp"

namespace sparkops {
namespace {

using namespace std::chrono_literals;

TEST(PlanServe, DefaultsComeFromTheConfig) {
  const Config config;
  auto plan = plan_serve(ServeRequest{}, config);
  ASSERT_TRUE(plan) << plan.error().detail;
  EXPECT_TRUE(plan->listen.loopback);
  EXPECT_EQ(plan->interval, config.get_duration("serve.interval"));
  EXPECT_EQ(plan->history, 1h);
  EXPECT_EQ(plan->max_workloads,
            static_cast<std::size_t>(config.get_integer("serve.max_workloads")));
  EXPECT_FALSE(plan->token);
  EXPECT_FALSE(plan->textfile);
}

TEST(PlanServe, NonLoopbackNeedsAuthenticationOrInsecure) {
  ServeRequest request;
  request.listen = "0.0.0.0:9877";
  auto refused = plan_serve(request, Config{});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, Errc::invalid_argument);
  EXPECT_NE(refused.error().detail.find("is not loopback"), std::string::npos);
  request.insecure = true;
  EXPECT_TRUE(plan_serve(request, Config{}));
}

TEST(PlanServe, RefusesWhatCannotBeServed) {
  ServeRequest fast;
  fast.interval = "50ms";
  EXPECT_EQ(plan_serve(fast, Config{}).error().detail, "--interval: must be at least 100ms");
  ServeRequest once;
  once.once = true;
  EXPECT_EQ(plan_serve(once, Config{}).error().detail, "--once needs --textfile DIR");
  ServeRequest many;
  many.max_workloads = "10001";
  EXPECT_EQ(plan_serve(many, Config{}).error().detail, "--max-workloads: must be 0-10000");
  ServeRequest nodir;
  nodir.textfile_dir = "/nonexistent/sparkops-serve-test";
  EXPECT_NE(plan_serve(nodir, Config{}).error().detail.find("not a directory"), std::string::npos);
}

TEST(PlanServe, TokenFileHoldsOneToken) {
  const auto dir = std::filesystem::temp_directory_path() / "sparkops-serve-session-test";
  std::filesystem::create_directories(dir);
  const auto file = dir / "token";
  ServeRequest request;
  request.listen = "0.0.0.0:9877";
  request.token_file = file.string();
  std::ofstream(file) << "s3cret\n";
  auto plan = plan_serve(request, Config{});
  ASSERT_TRUE(plan) << plan.error().detail;
  EXPECT_EQ(plan->token, "s3cret");
  std::ofstream(file) << "two words\n";
  EXPECT_NE(plan_serve(request, Config{}).error().detail.find("one token, no spaces"),
            std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sparkops

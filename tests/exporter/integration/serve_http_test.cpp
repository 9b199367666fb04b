// `sparkops serve` as a process: routes, read-only methods, tokens, textfile mode, signals.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "serve_harness.hpp"

namespace sparkops::exporter {
namespace {

using test::http_get;
using test::run_sparkops;
using test::start_serve;

TEST(ServeCli, NonLoopbackListenWithoutTokenIsRefused) {
  const auto r = run_sparkops({"serve", "--listen", "0.0.0.0:9877", "--gpu", "none"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--token"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(ServeCli, MalformedListenIsBadInput) {
  const auto r = run_sparkops({"serve", "--listen", "127.0.0.1:http", "--gpu", "none"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("port"), std::string::npos) << r.err;
}

TEST(ServeCli, EmptyTokenFileIsBadInput) {
  test::TempDir dir;
  test::write_text(dir / "token", "\n");
  const auto r = run_sparkops({"serve", "--token", (dir / "token").string(), "--gpu", "none"});
  EXPECT_EQ(r.exit_code, 2);
}

TEST(ServeCli, TextfileOnceWritesTheExposition) {
  test::TempDir dir;
  const auto r = run_sparkops({"--root", test::fixture("roots/gb10-idle").string(), "serve",
                               "--gpu", "none", "--textfile", dir.path().string(), "--once"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = test::slurp(dir / "sparkops.prom");
  EXPECT_NE(text.find("# TYPE sparkops_pool_total_bytes gauge\n"), std::string::npos);
  EXPECT_NE(text.find("sparkops_info{"), std::string::npos);
  EXPECT_EQ(text.find("sparkops_gpu_temperature_celsius"), std::string::npos);  // no GPU: absent
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(entry.path().filename(), "sparkops.prom") << "temporary file left behind";
  }
}

TEST(ServeCli, TextfileIntoMissingDirectoryIsBadInput) {
  const auto r =
      run_sparkops({"serve", "--gpu", "none", "--textfile", "/nonexistent/dir", "--once"});
  EXPECT_EQ(r.exit_code, 2);
}

class ServeHttp : public ::testing::Test {
 protected:
  test::TempDir logs_;
};

TEST_F(ServeHttp, ServesMetricsStatusHistoryAndDashboard) {
  auto s = start_serve(logs_.path(), "gb10-finetune", "gb10");
  ASSERT_GT(s.port, 0);
  auto metrics = http_get(s.port, "/metrics");
  ASSERT_TRUE(metrics) << httplib::to_string(metrics.error());
  EXPECT_EQ(metrics->status, 200);
  EXPECT_EQ(metrics->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(metrics->body.find("sparkops_gpu_temperature_celsius{gpu=\"0\"} 81\n"),
            std::string::npos)
      << metrics->body;
  EXPECT_NE(metrics->body.find("sparkops_pool_available_bytes "), std::string::npos);
  EXPECT_EQ(metrics->body.find("sparkops_gpu_power_limit_watts"), std::string::npos)
      << "NOT_SUPPORTED must be absent, not 0";

  auto status = http_get(s.port, "/api/status");
  ASSERT_TRUE(status);
  EXPECT_EQ(status->status, 200);
  EXPECT_TRUE(nlohmann::json::accept(status->body)) << status->body;

  auto history = http_get(s.port, "/api/history");
  ASSERT_TRUE(history);
  const auto h = nlohmann::json::parse(history->body);
  EXPECT_GE(h["time"].size(), 1U);
  EXPECT_EQ(h["series"]["gpu_temperature_celsius"][0], 81.0);

  auto page = http_get(s.port, "/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("uPlot"), std::string::npos);
  EXPECT_EQ(page->body.find("src=\"http"), std::string::npos)
      << "the page must not load anything external";
  EXPECT_NE(page->get_header_value("Content-Security-Policy").find("connect-src 'self'"),
            std::string::npos);

  auto missing = http_get(s.port, "/nope");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(s.process->stop(), 0) << s.process->output();
}

TEST_F(ServeHttp, OnlyGetAndHeadAreAllowed) {
  auto s = start_serve(logs_.path(), "gb10-idle", "");
  ASSERT_GT(s.port, 0);
  httplib::Client client("127.0.0.1", s.port);
  for (const auto& r :
       {client.Post("/metrics", "x", "text/plain"), client.Put("/metrics", "x", "text/plain"),
        client.Delete("/api/status"), client.Patch("/", "x", "text/plain")}) {
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 405);
    EXPECT_EQ(r->get_header_value("Allow"), "GET, HEAD");
  }
  auto head = client.Head("/metrics");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_TRUE(head->body.empty());
}

TEST_F(ServeHttp, OversizedRequestIsRejected) {
  auto s = start_serve(logs_.path(), "gb10-idle", "");
  ASSERT_GT(s.port, 0);
  httplib::Client client("127.0.0.1", s.port);
  const std::string big(64 * 1024, 'x');
  auto r = client.Get("/metrics", {{"X-Padding", big}});
  // cpp-httplib refuses header lines beyond its buffer; either way nothing is served.
  EXPECT_TRUE(!r || r->status >= 400);
  auto ok = client.Get("/metrics");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
}

TEST_F(ServeHttp, TokenIsRequiredWhenConfigured) {
  test::write_text(logs_ / "token", "s3cret-token\n");
  auto s = start_serve(logs_.path(), "gb10-idle", "", {"--token", (logs_ / "token").string()});
  ASSERT_GT(s.port, 0);
  auto none = http_get(s.port, "/metrics");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 401);
  auto wrong = http_get(s.port, "/metrics", {{"Authorization", "Bearer s3cret-tokex"}});
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  auto bearer = http_get(s.port, "/metrics", {{"Authorization", "Bearer s3cret-token"}});
  ASSERT_TRUE(bearer);
  EXPECT_EQ(bearer->status, 200);
  // A query-string token leaks into logs and history: only with --allow-query-token.
  auto query = http_get(s.port, "/api/history?token=s3cret-token");
  ASSERT_TRUE(query);
  EXPECT_EQ(query->status, 401);
}

TEST_F(ServeHttp, SigtermStopsCleanly) {
  auto s = start_serve(logs_.path(), "gb10-idle", "");
  ASSERT_GT(s.port, 0);
  EXPECT_EQ(s.process->stop(std::chrono::seconds{10}), 0) << s.process->output();
}

}  // namespace
}  // namespace sparkops::exporter

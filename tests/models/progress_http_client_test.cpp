// A Hub fetch reports its bytes as they arrive: 0 before the first answer, then the running total
// as each answer's bytes come in and after each one; a failed request adds nothing.

#include "models/progress_http_client.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace sparkops::models {
namespace {

class FakeHttp final : public HttpClient {
 public:
  Result<HttpResponse> get(const HttpRequest& request) const override {
    if (request.url == "missing") return fail(Errc::io, "no answer");
    return HttpResponse{200, {}, std::string(2048, 'x')};
  }
};

TEST(ProgressHttpClient, ReportsTheRunningTotalOfEveryAnswer) {
  std::vector<std::uint64_t> seen;
  const FakeHttp inner;
  const ProgressHttpClient client(inner, [&](std::uint64_t b) { seen.push_back(b); });
  ASSERT_TRUE(client.get({}));
  ASSERT_TRUE(client.get({}));
  EXPECT_EQ(seen, (std::vector<std::uint64_t>{0, 2048, 2048, 4096}));
  HttpRequest missing;
  missing.url = "missing";
  EXPECT_FALSE(client.get(missing));
  EXPECT_EQ(seen.back(), 4096U);
  EXPECT_EQ(seen.size(), 5U);
}

// A transport that delivers one 2 KiB answer in two parts (as libcurl's write callback does).
class StreamingHttp final : public HttpClient {
 public:
  Result<HttpResponse> get(const HttpRequest& request) const override {
    if (request.on_body_bytes) request.on_body_bytes(1536);
    if (request.on_body_bytes) request.on_body_bytes(2048);
    return HttpResponse{200, {}, std::string(2048, 'x')};
  }
};

// Byte-level: the total moves inside one answer, not only when it is complete; a second answer
// counts on top of the first, and a caller's own on_body_bytes still hears its answer's bytes.
TEST(ProgressHttpClient, ReportsBytesInsideAnAnswer) {
  std::vector<std::uint64_t> seen;
  const StreamingHttp inner;
  const ProgressHttpClient client(inner, [&](std::uint64_t b) { seen.push_back(b); });
  ASSERT_TRUE(client.get({}));
  std::vector<std::uint64_t> own;
  HttpRequest second;
  second.on_body_bytes = [&](std::uint64_t b) { own.push_back(b); };
  ASSERT_TRUE(client.get(second));
  EXPECT_EQ(seen, (std::vector<std::uint64_t>{0, 1536, 2048, 2048, 2048, 3584, 4096, 4096}));
  EXPECT_EQ(own, (std::vector<std::uint64_t>{1536, 2048}));
}

TEST(ProgressHttpClient, WithoutAHookItOnlyForwards) {
  const FakeHttp inner;
  const ProgressHttpClient client(inner, nullptr);
  const auto r = client.get({});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body.size(), 2048U);
}

}  // namespace
}  // namespace sparkops::models

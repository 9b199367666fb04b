// serve's HTTP front is a module loaded by serve alone (exporter/http_module.hpp): a command that
// never goes online maps no TLS or HTTP library, and serve maps the module with them.

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "serve_harness.hpp"
#include "support/background_process.hpp"
#include "support/test_support.hpp"

namespace sparkops::test {
namespace {

std::string maps_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(HttpModule, SampleMapsNoTlsOrHttpLibrary) {
  TempDir dir;
  const auto out = dir / "thermal.log";
  BackgroundProcess sample({sparkops_binary(), "--root", fixture("roots/gb10-finetune").string(),
                            "sample", "--interval", "1", "--gpu", "none", "--out", out.string()},
                           {}, dir.path());
  // The first row is written after start-up: every library the command loads is mapped by then.
  const auto written = [&] {
    std::error_code ec;
    const auto size = std::filesystem::file_size(out, ec);
    return !ec && size > 0;
  };
  for (int i = 0; i < 400 && !written() && sample.running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds{50});
  }
  ASSERT_TRUE(written()) << sample.output();
  ASSERT_TRUE(sample.running()) << sample.output();
  const std::string maps = maps_of(sample.pid());
  ASSERT_NE(maps.find("sparkops"), std::string::npos) << "maps not read";
  EXPECT_EQ(maps.find("libcrypto"), std::string::npos) << maps;
  EXPECT_EQ(maps.find("libssl"), std::string::npos) << maps;
  EXPECT_EQ(maps.find("libcpp-httplib"), std::string::npos) << maps;
  EXPECT_EQ(maps.find("sparkops-http.so"), std::string::npos) << maps;
}

TEST(HttpModule, ServeLoadsTheModuleAndItsLibraries) {
  TempDir dir;
  auto serve = start_serve(dir.path(), "gb10-idle", "");
  ASSERT_GT(serve.port, 0);
  const std::string maps = maps_of(serve.process->pid());
  EXPECT_NE(maps.find("sparkops-http.so"), std::string::npos) << maps;
  EXPECT_NE(maps.find("libcpp-httplib"), std::string::npos) << maps;
  EXPECT_NE(maps.find("libssl"), std::string::npos) << maps;
}

}  // namespace
}  // namespace sparkops::test

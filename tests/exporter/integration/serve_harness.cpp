#include "serve_harness.hpp"

#include <cstdlib>

#include <gtest/gtest.h>

#include "support/fake_nvml.hpp"

namespace sparkops::test {

ServeInstance start_serve(const std::filesystem::path& log_dir, const std::string& root,
                          const std::string& nvml_scenario, std::vector<std::string> extra_args) {
  std::vector<std::string> argv = {sparkops_binary(), "--root",   fixture("roots/" + root).string(),
                                   "serve",           "--listen", "127.0.0.1:0"};
  std::map<std::string, std::string> env;
  if (nvml_scenario.empty()) {
    argv.push_back("--gpu");
    argv.push_back("none");
  } else {
    env = fake_nvml_env(nvml_scenario);
    argv.push_back("--gpu");
    argv.push_back("nvml");
  }
  for (auto& a : extra_args) argv.push_back(std::move(a));
  ServeInstance s;
  s.process = std::make_unique<BackgroundProcess>(argv, env, log_dir);
  if (!s.process->wait_for_output("listening on", std::chrono::seconds{20})) {
    ADD_FAILURE() << "sparkops serve did not start:\n" << s.process->output();
    return s;
  }
  s.port = port_from_listen_line(s.process->output());
  EXPECT_GT(s.port, 0) << s.process->output();
  return s;
}

httplib::Result http_get(int port, const std::string& path, const httplib::Headers& headers) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(std::chrono::seconds{5});
  client.set_read_timeout(std::chrono::seconds{10});
  return client.Get(path, headers);
}

std::filesystem::path artefact_dir() {
  auto dir = std::filesystem::path(SPARKOPS_BUILD_DIR) / "artefacts" / "exporter";
  std::filesystem::create_directories(dir);
  return dir;
}

bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && std::string_view(v) == "1";
}

}  // namespace sparkops::test

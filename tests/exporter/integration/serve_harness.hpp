#pragma once
// Starts `sparkops serve` on a kernel-chosen loopback port against a fixture root and a fake NVML
// scenario, and fetches from it.

#include <memory>
#include <string>
#include <vector>

#include <httplib.h>

#include "support/background_process.hpp"
#include "support/test_support.hpp"

namespace sparkops::test {

struct ServeInstance {
  std::unique_ptr<BackgroundProcess> process;
  int port = 0;
};

// Empty `nvml_scenario` runs with --gpu none. Fails the test (port 0) when it does not come up.
ServeInstance start_serve(const std::filesystem::path& log_dir, const std::string& root,
                          const std::string& nvml_scenario,
                          std::vector<std::string> extra_args = {});

httplib::Result http_get(int port, const std::string& path, const httplib::Headers& headers = {});

// Where tests leave artefacts a person may look at (screenshots): <build>/artefacts/exporter.
std::filesystem::path artefact_dir();

bool env_set(const char* name);

}  // namespace sparkops::test

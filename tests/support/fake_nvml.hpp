#pragma once
// The fake libnvidia-ml (tests/gpu/fake_nvml, driven by FAKE_NVML_SCENARIO, a folder under
// tests/fixtures/nvml): the environment that points a child sparkops at it, and, for tests that
// load it in-process, a switch of scenario that resets its counters so every test starts from
// tick 0 whatever ran before in the same process. A test target that uses it defines
// FAKE_NVML_LIB (and FAKE_NVML_OLD_LIB for the old-API build) as the libraries' paths.

#include <dlfcn.h>
#include <stdlib.h>

#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include "support/test_support.hpp"

#ifdef FAKE_NVML_LIB

namespace sparkops::test {

// SPARKOPS_NVML_LIB and FAKE_NVML_SCENARIO for run_process / BackgroundProcess, plus `more`.
inline std::map<std::string, std::string> fake_nvml_env(
    std::string_view scenario, std::map<std::string, std::string> more = {}) {
  more["SPARKOPS_NVML_LIB"] = FAKE_NVML_LIB;
  more["FAKE_NVML_SCENARIO"] = fixture(std::string("nvml/") + std::string(scenario)).string();
  return more;
}

// The scenario folder at `path` (the named ones are under tests/fixtures/nvml: use_nvml_scenario).
inline void use_nvml_scenario_at(const std::filesystem::path& path) {
  ::setenv("FAKE_NVML_SCENARIO", path.c_str(), 1);
#ifdef FAKE_NVML_OLD_LIB
  for (const char* lib : {FAKE_NVML_LIB, FAKE_NVML_OLD_LIB}) {
#else
  for (const char* lib : {FAKE_NVML_LIB}) {
#endif
    if (void* h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD)) {
      if (auto reset = reinterpret_cast<void (*)()>(dlsym(h, "fake_nvml_reset"))) reset();
      dlclose(h);
    }
  }
}

inline void use_nvml_scenario(std::string_view name) {
  use_nvml_scenario_at(fixture(std::string("nvml/") + std::string(name)));
}

}  // namespace sparkops::test

#endif

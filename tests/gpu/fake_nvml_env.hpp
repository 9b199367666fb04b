#pragma once
// Test helper: points the fake libnvidia-ml at a scenario in tests/fixtures/nvml and resets its
// counters, so every test starts from tick 0 whatever ran before in the same process.

#include <dlfcn.h>
#include <stdlib.h>

#include <string>
#include <string_view>

#include "support/test_support.hpp"

namespace sparkops::test {

inline void use_nvml_scenario(std::string_view name) {
  const std::string path = fixture(std::string("nvml/") + std::string(name)).string();
  ::setenv("FAKE_NVML_SCENARIO", path.c_str(), 1);
  for (const char* lib : {FAKE_NVML_LIB, FAKE_NVML_OLD_LIB}) {
    if (void* h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD)) {
      if (auto reset = reinterpret_cast<void (*)()>(dlsym(h, "fake_nvml_reset"))) reset();
      dlclose(h);
    }
  }
}

}  // namespace sparkops::test

#pragma once
// Fixtures the plan tests share: catalogue shapes and the run configurations worked by hand.

#include <gtest/gtest.h>

#include <cstdint>
#include <string_view>

#include "models/catalogue.hpp"
#include "plan/autograd_sim.hpp"
#include "plan/estimator.hpp"

namespace sparkops::plan::fixtures {

// A catalogue model's shape, as `plan` resolves it without a config.json.
inline ModelShape shape(std::string_view name) {
  const auto* e = models::find_in_catalogue(name);
  EXPECT_NE(e, nullptr) << name;
  return ModelShape{e->name, e->arch, count_params(e->arch), std::nullopt};
}

// The step walk of a catalogue model under `run` (an empty result, and a test failure, when the
// family data does not parse).
inline SimResult simulated(std::string_view model, const SimRun& run) {
  auto r = simulate_step(shape(model).arch, run);
  EXPECT_TRUE(r.has_value()) << model;
  return r ? *r : SimResult{};
}

// A full fine-tune (bf16, the project's other defaults) on `gpus` GPUs of one machine.
inline RunConfig full_run(std::uint64_t gpus = 1, ShardMode shard = ShardMode::ddp) {
  RunConfig r;
  r.method = Method::full;
  r.gpus = gpus;
  r.shard = shard;
  return r;
}

}  // namespace sparkops::plan::fixtures

// The replay (plan/step_replay.cpp over plan/caching_allocator.cpp) against the full replay as it
// stood before it was tuned (replay_reference.cpp): every ReplayResult field must be equal, on
// random models and step sequences around the allocator's size boundaries, and on every catalogue
// model × method × a few sequence lengths and batch sizes as `plan` builds them.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/catalogue.hpp"
#include "plan/estimator.hpp"
#include "plan/reserve_model.hpp"
#include "plan/step_replay.hpp"
#include "replay_reference.hpp"

namespace sparkops::plan {
namespace {

void expect_same(const ReplayResult& fast, const ReplayResult& full, const std::string& what) {
  EXPECT_EQ(fast.peak_reserved, full.peak_reserved) << what;
  EXPECT_EQ(fast.peak_allocated, full.peak_allocated) << what;
  EXPECT_EQ(fast.peak_requested, full.peak_requested) << what;
  EXPECT_EQ(fast.segments, full.segments) << what;
  EXPECT_EQ(fast.out_of_memory, full.out_of_memory) << what;
  EXPECT_EQ(fast.alloc_retries, full.alloc_retries) << what;
}

// Sizes clustered around the rules' boundaries: 512 B rounding, the small pool's 1 MiB, the
// 10 MiB large-allocation threshold, the 20 MiB buffer, and some far above.
class Sizes {
 public:
  explicit Sizes(std::uint32_t seed) : rng_(seed) {}
  std::uint64_t next() {
    static constexpr std::uint64_t kAround[] = {
        512, kSmallSize, kSmallBuffer, kMinLargeAlloc, kLargeBuffer, 64 * kMiB};
    const int pick = std::uniform_int_distribution<int>(0, 9)(rng_);
    if (pick < 6) {
      const std::uint64_t c = kAround[pick];
      const auto jitter = std::uniform_int_distribution<std::int64_t>(-4096, 4096)(rng_);
      const auto v = static_cast<std::int64_t>(c) + jitter * (pick == 0 ? 1 : 97);
      return static_cast<std::uint64_t>(std::max<std::int64_t>(1, v));
    }
    return std::uniform_int_distribution<std::uint64_t>(1, 300 * kMiB)(rng_);
  }
  std::vector<std::uint64_t> list(int max_len) {
    std::vector<std::uint64_t> v(
        static_cast<std::size_t>(std::uniform_int_distribution<int>(0, max_len)(rng_)));
    for (auto& x : v) x = next();
    return v;
  }
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool coin() { return uniform(0, 1) == 1; }

 private:
  std::mt19937 rng_;
};

StepShape random_step(Sizes& r, double scale) {
  StepShape s;
  auto sz = [&] { return r.uniform(0, 5) == 0 ? 0.0 : static_cast<double>(r.next()) * scale; };
  s.hidden = sz();
  s.inputs = sz();
  s.rope = sz();
  s.stem_extra = sz();
  const int blocks = r.uniform(0, 14);
  for (int i = 0; i < blocks; ++i) {
    SimResult::LayerBlock b;
    b.bytes = sz();
    b.saved = r.coin();
    b.dequant = r.uniform(0, 3) == 0 ? sz() : 0.0;
    s.layer.push_back(b);
  }
  s.layer_backward_peak = sz() * 4;
  s.layer_saves_input = r.coin();
  s.final_saved = sz();
  s.loss_saved = sz();
  s.head_copy = sz();
  s.loss_forward = sz();
  s.loss_backward = sz();
  s.leaf_grad = sz();
  return s;
}

TEST(ReplayFastPath, RandomModelsAndStepsGiveTheFullReplaysFigures) {
  for (std::uint32_t seed = 1; seed <= 300; ++seed) {
    Sizes r(seed);
    ReplayModel m;
    m.params = r.list(40);
    if (r.coin()) {
      for (std::size_t i = 0; i < m.params.size(); ++i)
        m.load_sources.push_back(i % 2 == 0 ? ReplayModel::LoadSource{r.next(), 2}
                                            : ReplayModel::LoadSource{});
    }
    m.adapters = r.list(20);
    m.layer_grads = r.list(6);
    m.head_grads = r.list(3);
    m.stem_grads = r.list(2);
    m.states = r.list(30);
    m.step_temps = r.list(10);
    m.forward_workspaces = r.list(2);
    m.backward_workspaces = r.list(2);
    m.layers = static_cast<std::uint64_t>(r.uniform(0, 40));
    m.checkpointing = r.coin();
    m.dequant_copies = static_cast<unsigned>(r.uniform(1, 2));
    m.min_layer_block = r.coin() ? kSmallSize : 0;
    AllocatorConfig c;
    c.expandable_segments = r.uniform(0, 2) == 0;
    if (r.uniform(0, 2) == 0)
      c.max_split_size = static_cast<std::uint64_t>(r.uniform(1, 300)) * kMiB;
    if (r.uniform(0, 2) == 0) c.capacity = static_cast<std::uint64_t>(r.uniform(10, 20000)) * kMiB;
    std::vector<StepShape> steps;
    const int n = r.uniform(1, 5);
    const bool rising = r.coin();
    const StepShape base = random_step(r, 1.0);
    for (int k = 1; k <= n; ++k) {
      if (rising) {
        StepShape s = base;
        const double f = static_cast<double>(k) / n;
        s.hidden *= f;
        s.inputs *= f;
        for (auto& b : s.layer) b.bytes *= f;
        steps.push_back(s);
      } else {
        steps.push_back(r.coin() ? base : random_step(r, 1.0));
      }
    }
    expect_same(replay_training(m, steps, c), reference::replay_training(m, steps, c),
                "seed " + std::to_string(seed));
  }
}

TEST(ReplayFastPath, EveryCatalogueModelAndMethodGivesTheFullReplaysFigures) {
  int compared = 0;
  for (const auto& e : models::catalogue()) {
    const ModelShape shape{e.name, e.arch, count_params(e.arch), std::nullopt};
    for (const Method method : {Method::full, Method::lora, Method::qlora}) {
      // Packed with checkpointing, packed without, lengths varying with expandable segments.
      struct Case {
        std::uint64_t seq, batch;
        bool packed, ckpt;
      };
      for (const Case c :
           {Case{1024, 1, true, true}, Case{2048, 2, true, false}, Case{4096, 1, false, true}}) {
        const auto [seq, batch, packed, ckpt] = c;
        RunConfig run;
        run.method = method;
        run.seq = seq;
        run.batch = batch;
        run.packed = packed;
        run.expandable_segments = !packed;
        run.grad_ckpt = ckpt ? GradCkpt::full : GradCkpt::none;
        const Estimate est = estimate(shape, run);
        const ReplayInputs in = replay_inputs(shape, run, est.terms, est.paged_bytes);
        const std::string what = e.name + " method " + std::to_string(static_cast<int>(method)) +
                                 " seq " + std::to_string(seq) + " batch " + std::to_string(batch) +
                                 (packed ? " packed" : " varying");
        expect_same(replay_training(in.model, in.fixed, in.config),
                    reference::replay_training(in.model, in.fixed, in.config), what);
        if (!in.varying.empty())
          expect_same(replay_training(in.model, in.varying, in.config),
                      reference::replay_training(in.model, in.varying, in.config), what);
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 100);
}

}  // namespace
}  // namespace sparkops::plan

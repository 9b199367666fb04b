// libFuzzer target: the estimator's arithmetic on any shape a config.json can describe. The input
// is the config.json itself (so the fixture configs are seeds as they are); its length, first,
// middle and last bytes pick the run (method, precision, batch, seq, rank, nodes, checkpointing
// and its offloading, the framework preset, the loss path and attention kernel over it, compiled
// or not, and the device's reach, from none to less than the weights, so the capped replay and out
// of memory are reached). A config that
// parses and passes check_plausible is estimated, and every term must come out without undefined
// behaviour (UBSan: float-cast-overflow, signed overflow) and with a peak no smaller than the
// weights it holds.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "models/model_shape.hpp"
#include "plan/estimator.hpp"
#include "plan/frameworks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto a = static_cast<std::uint8_t>(size * 131 % 251), b = data[size / 2];
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto arch = sparkops::models::parse_config_json(text, "config.json");
  if (!arch) return 0;
  sparkops::models::ModelShape shape;
  shape.name = "fuzz";
  shape.arch = *arch;
  shape.params = sparkops::models::count_params(shape.arch);
  using namespace sparkops::plan;
  RunConfig run;
  run.method = static_cast<Method>(a % 3);
  run.precision = static_cast<Precision>((a >> 2) % 4);
  run.batch = std::uint64_t{1} << (b % 8);
  run.seq = std::uint64_t{128} << ((b >> 3) % 8);
  run.lora_rank = std::uint64_t{4} << ((a >> 3) % 6);
  run.nodes = 1 + ((a >> 6) % 2);
  run.grad_ckpt = (b >> 6) % 2 == 0 ? GradCkpt::full : GradCkpt::none;
  const std::uint8_t c = data[0], d = data[size - 1];
  // Every preset (nemo's runs Megatron-Core's layer program where it has one, unsloth's its own),
  // then any loss path and attention kernel (xformers included) on top of it.
  apply_framework(static_cast<Framework>(c % 9), run);
  if ((c >> 3) % 2 == 1) run.loss = static_cast<LossKind>((c >> 4) % 9);
  if (d % 2 == 1) run.attn = static_cast<Attn>((d >> 1) % 5);
  // Compiled or eager; checkpointing offloaded (under torchtune, its every-step offloading).
  run.compiled = (c >> 1) % 2 == 1;
  if ((c >> 2) % 4 == 3) run.grad_ckpt = GradCkpt::offload;
  // 0 (unknown: uncapped), or 1 GiB << 0..6, on a discrete card or a unified pool.
  if ((d >> 3) % 8 != 0) {
    run.device_reach_bytes = (std::uint64_t{1} << 30) << ((d >> 3) % 8 - 1);
    run.reach_unified = (d >> 6) % 2 == 1;
  }
  if (!validate_run(run, shape)) return 0;
  const Estimate e = estimate(shape, run);
  if (e.peak_pool_bytes() < e.terms.weights) std::abort();
  return 0;
}

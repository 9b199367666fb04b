#pragma once
// A planned run as the user spells it: the text of the plan flags (`plan`, `oom`, `watch` and
// `procs --plan` share them), parsed into a PlanInput. cli/plan_flags.hpp registers the flags;
// every error here names the flag it is about, and bad text is an error, never a default.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "plan/plan.hpp"

namespace sparkops::plan {

// Raw flag text, with the defaults --help shows; converted and validated by plan_input.
struct PlanArgs {
  std::string model;   // positional MODEL: catalogue name, directory or ORG/NAME
  std::string params;  // --params 70B / 7.6e9 / 8030261248
  std::string hidden, layers, heads, kv_heads, intermediate, vocab;
  bool tied = false;
  std::string mlp, norm;  // --mlp gated|plain, --norm rms|layer (with --params)
  bool parallel_block = false;
  std::string method = "lora";
  std::string precision = "bf16";
  std::string optim;         // empty: the preset's (torch AdamW unless the framework picks another)
  std::string batch = "1";   // "1" or a list "1,2,4" (fit matrix)
  std::string seq = "2048";  // "2048" or a list "1024,2048,4096"
  std::string grad_ckpt;     // empty: the preset's (full; unsloth offload, nemo none)
  std::string attn;          // empty: the preset's (sdpa; axolotl flash)
  std::string lora_rank;     // empty: the preset's (swift 8), else 16
  std::string lora_targets = "all-linear";
  bool kbit_prep = false;
  bool kept_fp16 = false;        // QLoRA: unquantized modules fp16 under bf16 autocast
  bool lora_head = false;        // LoRA on the lm_head too
  bool compile = false;          // the run is under torch.compile
  std::string optimizer_in_bwd;  // on | off; empty: the preset's (torchtune full, one GPU: on)
  bool chunked_loss = false;     // the older spelling of --loss chunked
  std::string framework;         // empty: config plan.framework (cmd_plan), else hf
  std::string loss;              // empty: the preset's
  std::string transformers;   // transformers release; empty: config plan.transformers (cmd_plan),
                              // else the preset's
  std::string lora_dropout;   // empty: the preset's
  std::string adapter_dtype;  // fp32 | model; empty: the preset's
  std::string bnb_version;    // bitsandbytes release; empty: the preset's
  bool no_double_quant = false;
  std::string lengths = "fixed";  // fixed | varying (unpacked data up to --seq)
  bool expandable_segments = false;
  std::string nodes = "1";
  std::string gpus = "1";       // GPUs per machine
  std::string shard;            // ddp | fsdp | zero1 | zero2 | zero3; empty: the preset's
  std::string grad_accum;       // empty: the preset's (swift: up to 16 sequences a step), else 1
  std::string budget = "auto";  // GB (bare number = GiB, as `free -g`) or auto
  std::string overhead;         // empty = config pool.overhead
  // --device-total SIZE: the device's memory as CUDA reports it (training: what cudaMalloc can
  // reach; serving: the base of fraction engines). Empty: read from the machine.
  std::string device_total;
};

// Parses the text into a PlanInput (first value of list flags). Errors name the flag.
Result<PlanInput> plan_input(const PlanArgs& args);

// The --seq / --batch lists ("1024,2048,4096"); one element when a single value was given.
Result<std::vector<std::uint64_t>> parse_count_list(std::string_view text, std::string_view flag);

// --device-total: a size (bare numbers GiB) above 0 and at most kMaxDeviceTotal. The Error
// names the flag.
inline constexpr std::uint64_t kMaxDeviceTotal = 1ULL << 44;  // 16 TiB
Result<std::uint64_t> parse_device_total(std::string_view text);

// --params: "70B", "7.6e9", "8030261248", "1.5T", "350M" (at most 10^15).
Result<std::uint64_t> parse_param_count(std::string_view text);

}  // namespace sparkops::plan

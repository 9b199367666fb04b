#pragma once
// The `plan` flags, shared by every command that plans a run (plan, oom, watch, procs --plan), so
// they all accept exactly the same spelling and defaults. Only flag text is parsed here; the
// serving flags are planned by serving/serving_flags.hpp.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "base/result.hpp"
#include "plan/plan.hpp"
#include "serving/serving_flags.hpp"

namespace sparkops::cli {

// Raw flag text; converted and validated by plan_input_from_flags.
struct PlanFlags {
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
  std::string lora_rank = "16";
  std::string lora_targets = "all-linear";
  bool kbit_prep = false;
  bool chunked_loss = false;  // the older spelling of --loss chunked
  std::string framework;      // empty: config plan.framework (cmd_plan), else hf
  std::string loss;           // empty: the preset's
  std::string lora_dropout;   // empty: the preset's
  std::string adapter_dtype;  // fp32 | model; empty: the preset's
  std::string bnb_version;    // bitsandbytes release; empty: the preset's
  bool no_double_quant = false;
  std::string lengths = "fixed";  // fixed | varying (unpacked data up to --seq)
  bool expandable_segments = false;
  std::string nodes = "1";
  std::string gpus = "1";  // GPUs per machine
  std::string shard;       // ddp | fsdp | zero1 | zero2 | zero3; empty: the preset's
  std::string grad_accum = "1";
  std::string budget = "auto";  // GB (bare number = GiB, as `free -g`) or auto
  std::string overhead;         // empty = config pool.overhead
  // Serving (docs/serving.md): --serve ENGINE with the engine's own flags in --serve-args (or,
  // for `plan`, after `--`), and the jobs to judge the plan beside.
  std::string serve;                      // vllm | sglang | ollama | llamacpp | trtllm
  std::string serve_args;                 // "--max-model-len 32768 --gpu-memory-utilization 0.5"
  std::vector<std::string> engine_words;  // `plan ... --serve vllm -- --max-model-len 32768`
  std::vector<std::string> beside;        // command lines, as the user would run them
  bool beside_running = false;            // judge against what `procs` sees now
  std::string device_total;               // what CUDA reports as the device total
};

// Registers the flags on `cmd` (MODEL positional included) with their defaults in --help.
void add_plan_flags(CLI::App* cmd, PlanFlags& flags);

// The serving flags among them, for serving/serving_flags.hpp.
serving::ServingFlags serving_flags_of(const PlanFlags& flags);

// Parses the flag text into a PlanInput (first value of list flags). Errors name the flag.
Result<plan::PlanInput> plan_input_from_flags(const PlanFlags& flags);

// The --seq / --batch lists ("1024,2048,4096"); one element when a single value was given.
Result<std::vector<std::uint64_t>> parse_count_list(std::string_view text, std::string_view flag);

}  // namespace sparkops::cli

#pragma once
// The validation of the estimator against tests/fixtures/plan/memory-measured.csv (a copy of the
// shared measured peaks): which rows are fully specified, how each maps to a plan, and the error.

#include <optional>
#include <string>
#include <vector>

#include "plan/estimator.hpp"

namespace sparkops::plan::validation {

struct Row {
  std::string id;
  std::string model;
  std::string method_text;
  std::string measured_text;  // the peak cell and its unit, as written
  double measured_bytes = 0;  // peak in bytes (GiB or GB per the unit column)
  bool pool_metric = false;   // nvidia-smi style (pool) vs max_memory_allocated
  bool fully_specified = false;
  std::string excluded_reason;  // why not, when not
  ModelShape shape;
  RunConfig run;
  double estimate_bytes = 0;
  double pool_estimate_bytes = 0;  // what the device loses (context + allocator reserve): OOM rows
  double error = 0;                // estimate / measured - 1 (when measured is one number)
  bool estimated = false;          // shape and run could be built (also for excluded rows)
  std::optional<double> oom_above_bytes;  // "OOM (>~22)" rows: the card it did not fit on
  // memory-measured-2.csv only:
  std::string source;  // the publication the row comes from
  std::string metric;  // allocated | reserved | pool (what the estimate was compared with)
  std::string flags;   // the plan flags the row maps to
  // The estimate's range for the row's metric (equal ends when nothing is unknown).
  double range_low_bytes = 0, range_high_bytes = 0;
};

// RFC 4180 fields of one CSV line (no newlines inside fields in these files).
std::vector<std::string> csv_fields(std::string_view line);

// cuBLAS's default workspace on the row's GPU (CublasHandlePool.cpp): 32 MiB from compute
// capability 9 (Hopper, Blackwell, GB10), ":4096:2:16:8" before.
std::uint64_t cublas_workspace_for(std::string_view hardware);

// The memory CUDA reports for the discrete GPU the row's hardware column names
// (torch.cuda.get_device_properties().total_memory, the "total capacity" of torch's OOM message):
// what cudaMalloc can reach, RunConfig::device_reach_bytes. nullopt where the column names no
// card or not its memory size ("1x A100", "4x A100", "A100 likely", "12 GB GPU"), and for a
// unified machine (DGX Spark), whose reach is the MemAvailable a row does not state.
// docs/estimator.md "The device's capacity" cites each figure.
std::optional<std::uint64_t> device_total_for(std::string_view hardware);

// The layer program a row's config.json names where the catalogue's nearest model would be the
// wrong one: microsoft/phi-2 is PhiForCausalLM (model_type "phi": one LayerNorm feeding attention
// and the fc1/gelu/fc2 MLP in parallel; LitGPT's phi-2 config: parallel_residual,
// shared_attention_norm, GptNeoxMLP, LayerNorm); StableLM-Alpha is GPTNeoXForCausalLM
// (use_parallel_residual); tiiuae/falcon-7b is FalconForCausalLM (parallel_attn, one LayerNorm,
// multi-query). The Megatron-Core "GPT (from scratch)" rows take GPT-2's program: their
// TransformerEngine layer spec (TELayerNormColumnParallelLinear, fused attention, a GELU MLP,
// unfused bias-dropout-add, TransformerConfig's hidden_dropout 0.1) keeps the same tensors as
// GPT2Block under flash attention: the norm inputs and outputs, q/k/v, the attention output, the
// MLP's pre- and post-GELU tensors and two dropout masks. nullptr for the other models.
const char* config_layer_program(std::string_view model);

// Gives `shape` that program with nothing of the nearest model's own layout left (soft-capping and
// its eager attention, post-norms, q/k norms; the plain MLP all three have) and re-splits the
// row's stated total: the linears take what the embedding, head and norms leave.
void take_layer_program(ModelShape& shape, const char* family, double params_b);

// memory-measured-2.csv (its own header: metric and unit per row, framework, sharding, loss).
std::vector<Row> evaluate_v2(const std::string& csv_text);

// Per-source error table (median, worst, rows, flags) plus every row, for docs/estimator.md.
std::string markdown_table_v2(const std::vector<Row>& rows);

// Parses the CSV (RFC 4180 quoting) and estimates every row that is fully specified.
std::vector<Row> evaluate(const std::string& csv_text);

// The markdown table docs/estimator.md carries (rows in CSV order, then the summary line).
std::string markdown_table(const std::vector<Row>& rows);

}  // namespace sparkops::plan::validation

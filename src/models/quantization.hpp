#pragma once
// Pre-quantized checkpoints: what config.json's `quantization_config` says, the bytes the weights
// occupy as stored, and what that implies for training and serving. docs/models.md gives every
// layout and the producing library's code it was read from.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace sparkops::models {

struct Architecture;

enum class QuantMethod {
  bnb_4bit,            // bitsandbytes Linear4bit (nf4 / fp4)
  bnb_8bit,            // bitsandbytes LLM.int8 (Int8Params + SCB)
  gptq,                // AutoGPTQ / GPTQModel / optimum: qweight, qzeros, scales, g_idx
  awq,                 // AutoAWQ: qweight, qzeros, scales
  fp8,                 // transformers FineGrainedFP8 (quant_method "fp8", block scales)
  compressed_tensors,  // llm-compressor (fp8, int4/int8 pack-quantized, nvfp4)
  mxfp4,               // gpt-oss: 32-value blocks of e2m1 + one e8m0 scale
  nvfp4,               // NVIDIA ModelOpt NVFP4: 16-value blocks of e2m1 + one e4m3 scale
  gguf,                // llama.cpp / Ollama GGUF (per-tensor ggml types)
};
std::string_view quant_method_name(QuantMethod m);  // "bitsandbytes-4bit", "gptq", ...

// What a quantized base means for a fine-tune.
enum class QuantTraining {
  frozen_quantized,  // adapters over the frozen quantized weights (QLoRA-style for 4-bit)
  dequantized,       // the stack dequantizes to 16-bit to train (gpt-oss MXFP4, fp8)
};

struct Quantization {
  QuantMethod method = QuantMethod::bnb_4bit;
  std::string format;  // "nf4", "int4 g128", "fp8 e4m3 block 128x128", "Q4_K_M" ...
  unsigned bits = 16;  // bits per quantized weight value
  std::optional<std::uint64_t> group_size;
  bool double_quant = false;                // bnb: absmax quantized again
  std::string quant_storage = "uint8";      // bnb_4bit_quant_storage
  std::vector<std::string> not_converted;   // modules left 16-bit (llm_int8_skip_modules,
                                            // modules_to_not_convert, ignore, exclude_modules)
  bool lm_head_quantized = false;           // GPTQ "lm_head": true
  std::optional<std::uint64_t> block_rows;  // fp8 weight_block_size
  std::optional<std::uint64_t> block_cols;
  std::uint64_t weight_bytes = 0;  // every stored tensor, as loaded for serving
  bool exact = false;              // true: summed from tensor headers; false: derived from
                                   // the config and the architecture (docs/models.md)
  QuantTraining training = QuantTraining::frozen_quantized;
  std::string training_note;  // one line for the plan's notes
  std::string serving_note;
};

// Pure: the `quantization_config` object of a config.json (its JSON text), or nullopt when the
// config has none. Unknown quant_method values are an Error naming it (planning them as bf16
// would be wrong by 2-4x).
//   "quantization_config": {"bits": 4, "group_size": 128, "quant_method": "gptq", ...}
Result<std::optional<Quantization>> parse_quantization_config(std::string_view config_text,
                                                              std::string_view source);

// The stored bytes of every weight of `a` under `q` (the format's tensors per linear map, the
// modules it leaves unquantized at 16 bits), overflow-checked. Sets q.weight_bytes, exact=false.
Status derive_quantized_bytes(const Architecture& a, Quantization& q);

}  // namespace sparkops::models

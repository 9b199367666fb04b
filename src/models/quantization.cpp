#include "models/quantization.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/text.hpp"
#include "models/checked.hpp"
#include "models/model_shape.hpp"

namespace sparkops::models {

using nlohmann::json;

std::string_view quant_method_name(QuantMethod m) {
  switch (m) {
    case QuantMethod::bnb_4bit:
      return "bitsandbytes-4bit";
    case QuantMethod::bnb_8bit:
      return "bitsandbytes-8bit";
    case QuantMethod::gptq:
      return "gptq";
    case QuantMethod::awq:
      return "awq";
    case QuantMethod::fp8:
      return "fp8";
    case QuantMethod::compressed_tensors:
      return "compressed-tensors";
    case QuantMethod::mxfp4:
      return "mxfp4";
    case QuantMethod::nvfp4:
      return "nvfp4";
    case QuantMethod::gguf:
      return "gguf";
  }
  return "?";
}

namespace {

std::optional<std::uint64_t> u64(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  if (it->is_number_unsigned()) return it->get<std::uint64_t>();
  return std::nullopt;  // negative (GPTQ group_size -1 means "one group")
}

bool flag(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

std::string str(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

void collect_names(const json& j, const char* key, std::vector<std::string>& out) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return;
  for (const auto& v : *it) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
}

Result<unsigned> bits_in(const json& q, std::string_view source, std::string_view method) {
  const auto b = u64(q, "bits");
  if (!b || (*b != 2 && *b != 3 && *b != 4 && *b != 8)) {
    return fail(
        Errc::malformed,
        fmt::format("{}: {} quantization_config: \"bits\" missing or not 2/3/4/8", source, method));
  }
  return static_cast<unsigned>(*b);
}

// A 4-bit base trains QLoRA-style; other frozen bases train LoRA over them.
void frozen(Quantization& q, std::string_view what, std::string_view serving) {
  q.training = QuantTraining::frozen_quantized;
  q.training_note = fmt::format(
      "{} base: LoRA adapters train over the frozen quantized weights{} (full fine-tuning of a "
      "quantized checkpoint is not possible)",
      what, q.bits == 4 ? " (QLoRA-style)" : "");
  q.serving_note = std::string(serving);
}

Result<Quantization> parse_compressed_tensors(const json& q, std::string_view source) {
  Quantization out;
  out.method = QuantMethod::compressed_tensors;
  const std::string format = str(q, "format");
  collect_names(q, "ignore", out.not_converted);
  const auto groups = q.find("config_groups");
  if (groups == q.end() || !groups->is_object() || groups->empty()) {
    return fail(
        Errc::malformed,
        fmt::format("{}: compressed-tensors quantization_config without config_groups", source));
  }
  // One scheme for every targeted Linear is what llm-compressor writes for its presets (W8A8,
  // W4A16, FP8, NVFP4); the first group describes the weights.
  const json& g = groups->begin().value();
  const auto w = g.find("weights");
  if (w == g.end() || !w->is_object()) {
    return fail(Errc::malformed,
                fmt::format("{}: compressed-tensors group without \"weights\"", source));
  }
  const auto nb = u64(*w, "num_bits");
  if (!nb || (*nb != 4 && *nb != 8)) {
    return fail(Errc::malformed,
                fmt::format("{}: compressed-tensors weights num_bits missing or not 4/8", source));
  }
  out.bits = static_cast<unsigned>(*nb);
  const std::string type = str(*w, "type");
  const std::string strategy = str(*w, "strategy");
  if (const auto gs = u64(*w, "group_size")) out.group_size = *gs;
  if (format == "nvfp4-pack-quantized" || (type == "float" && out.bits == 4)) {
    out.method = QuantMethod::nvfp4;
    out.group_size = out.group_size.value_or(16);
    out.format = "nvfp4 (e2m1, e4m3 scale per 16)";
  } else {
    out.format = fmt::format("{}{} {}{}", type == "float" ? "fp" : "int", out.bits,
                             strategy.empty() ? "tensor" : strategy,
                             out.group_size ? fmt::format(" g{}", *out.group_size) : "");
  }
  if (type == "float" && out.bits == 8) {
    out.training = QuantTraining::dequantized;
    out.training_note =
        "fp8 checkpoint: training stacks dequantize it to 16-bit (planned as bf16 weights)";
    out.serving_note = "vLLM/SGLang/TensorRT-LLM serve it with fp8 kernels";
  } else {
    frozen(out, fmt::format("{}-bit compressed-tensors", out.bits),
           "vLLM serves it with its compressed-tensors kernels");
  }
  return out;
}

}  // namespace

Result<std::optional<Quantization>> parse_quantization_config(std::string_view text,
                                                              std::string_view source) {
  const json root = json::parse(text.begin(), text.end(), nullptr, false);
  if (root.is_discarded() || !root.is_object()) {
    return fail(Errc::malformed, fmt::format("{}: not a JSON object", source));
  }
  const auto it = root.find("quantization_config");
  if (it == root.end() || it->is_null()) return std::optional<Quantization>{};
  if (!it->is_object()) {
    return fail(Errc::malformed, fmt::format("{}: quantization_config is not an object", source));
  }
  const json& q = *it;
  const std::string method = to_lower(str(q, "quant_method"));
  Quantization out;
  if (method == "bitsandbytes" ||
      (method.empty() && (flag(q, "load_in_4bit") || flag(q, "load_in_8bit")))) {
    // transformers BitsAndBytesConfig.to_dict(); load_in_4bit wins when both are (wrongly) set,
    // as in BitsAndBytesConfig.quantization_method().
    collect_names(q, "llm_int8_skip_modules", out.not_converted);
    if (flag(q, "load_in_4bit") || flag(q, "_load_in_4bit")) {
      out.method = QuantMethod::bnb_4bit;
      out.bits = 4;
      const std::string type = str(q, "bnb_4bit_quant_type");
      out.format = type.empty() ? "fp4" : type;  // BitsAndBytesConfig default is "fp4"
      if (out.format != "nf4" && out.format != "fp4") {
        return fail(Errc::malformed, fmt::format("{}: bnb_4bit_quant_type {} is not nf4 or fp4",
                                                 source, quote_for_message(out.format)));
      }
      out.double_quant = flag(q, "bnb_4bit_use_double_quant");
      if (const auto s = str(q, "bnb_4bit_quant_storage"); !s.empty()) out.quant_storage = s;
      out.group_size = 64;  // Linear4bit / Params4bit blocksize
      frozen(out, fmt::format("4-bit bitsandbytes {}", out.format),
             "vLLM and TGI load bitsandbytes 4-bit; llama.cpp/Ollama need a GGUF made from the "
             "original weights");
    } else if (flag(q, "load_in_8bit") || flag(q, "_load_in_8bit")) {
      out.method = QuantMethod::bnb_8bit;
      out.bits = 8;
      out.format = "int8 (LLM.int8)";
      frozen(out, "8-bit bitsandbytes", "vLLM and TGI load bitsandbytes 8-bit");
    } else {
      return fail(Errc::malformed,
                  fmt::format("{}: bitsandbytes quantization_config with neither load_in_4bit nor "
                              "load_in_8bit",
                              source));
    }
  } else if (method == "gptq" || method == "awq") {
    auto bits = bits_in(q, source, method);
    if (!bits) return tl::unexpected(bits.error());
    out.method = method == "gptq" ? QuantMethod::gptq : QuantMethod::awq;
    out.bits = *bits;
    // group_size -1 (GPTQ: one group per column) is left unset: the group is the whole input.
    if (const auto g = u64(q, "group_size"); g && *g > 0) out.group_size = *g;
    if (const auto g = u64(q, "q_group_size"); g && *g > 0) out.group_size = *g;  // AutoAWQ key
    if (const auto b = u64(q, "w_bit")) out.bits = static_cast<unsigned>(*b);
    collect_names(q, "modules_to_not_convert", out.not_converted);
    out.lm_head_quantized = flag(q, "lm_head");
    out.format = fmt::format("int{} {}", out.bits,
                             out.group_size ? fmt::format("g{}", *out.group_size) : "per-column");
    frozen(out, fmt::format("{}-bit {}", out.bits, method == "gptq" ? "GPTQ" : "AWQ"),
           "vLLM/TGI/SGLang serve it with Marlin or exllama kernels");
  } else if (method == "fp8") {
    out.method = QuantMethod::fp8;
    out.bits = 8;
    const std::string fmt_name = str(q, "fmt").empty() ? "e4m3" : str(q, "fmt");
    const auto blocks = q.find("weight_block_size");
    if (blocks != q.end() && blocks->is_array() && blocks->size() == 2 &&
        (*blocks)[0].is_number_unsigned() && (*blocks)[1].is_number_unsigned() &&
        (*blocks)[0].get<std::uint64_t>() > 0 && (*blocks)[1].get<std::uint64_t>() > 0) {
      out.block_rows = (*blocks)[0].get<std::uint64_t>();
      out.block_cols = (*blocks)[1].get<std::uint64_t>();
    }
    collect_names(q, "modules_to_not_convert", out.not_converted);
    out.format = out.block_rows
                     ? fmt::format("fp8 {} block {}x{}", fmt_name, *out.block_rows, *out.block_cols)
                     : fmt::format("fp8 {} per-tensor", fmt_name);
    out.training = QuantTraining::dequantized;
    out.training_note =
        "fp8 checkpoint: training stacks dequantize it to 16-bit (planned as bf16 weights)";
    out.serving_note = "vLLM/SGLang/TensorRT-LLM serve it with fp8 kernels";
  } else if (method == "compressed-tensors") {
    auto ct = parse_compressed_tensors(q, source);
    if (!ct) return tl::unexpected(ct.error());
    out = std::move(*ct);
  } else if (method == "mxfp4") {
    out.method = QuantMethod::mxfp4;
    out.bits = 4;
    out.group_size = 32;
    out.format = "mxfp4 (e2m1, e8m0 scale per 32)";
    collect_names(q, "modules_to_not_convert", out.not_converted);
    out.training = QuantTraining::dequantized;
    out.training_note =
        "MXFP4 experts: transformers dequantizes them to bf16 for training (Mxfp4Config("
        "dequantize=True), as OpenAI's fine-tuning recipe does): planned as bf16 weights";
    out.serving_note = "vLLM, Ollama and llama.cpp serve the MXFP4 experts as stored";
  } else if (method == "modelopt") {
    const std::string algo = to_lower(str(q, "quant_algo"));
    if (algo != "nvfp4" && algo != "fp8") {
      return fail(Errc::malformed, fmt::format("{}: modelopt quant_algo {} is not NVFP4 or FP8",
                                               source, quote_for_message(algo)));
    }
    collect_names(q, "exclude_modules", out.not_converted);
    if (algo == "fp8") {
      out.method = QuantMethod::fp8;
      out.bits = 8;
      out.format = "fp8 e4m3 per-tensor";
      out.training = QuantTraining::dequantized;
      out.training_note =
          "fp8 checkpoint: training stacks dequantize it to 16-bit (planned as bf16 weights)";
      out.serving_note = "TensorRT-LLM and vLLM serve it with fp8 kernels";
    } else {
      out.method = QuantMethod::nvfp4;
      out.bits = 4;
      out.group_size = u64(q, "group_size").value_or(16);
      out.format = "nvfp4 (e2m1, e4m3 scale per 16)";
      frozen(out, "NVFP4", "TensorRT-LLM and vLLM serve it with FP4 tensor-core kernels");
    }
  } else {
    return fail(Errc::unsupported,
                fmt::format("{}: quantization_config quant_method {} is not one sparkops knows "
                            "(bitsandbytes, gptq, awq, fp8, compressed-tensors, mxfp4, modelopt)",
                            source, quote_for_message(method)));
  }
  if (out.group_size && *out.group_size == 0) out.group_size.reset();
  return std::optional<Quantization>{std::move(out)};
}

namespace {

bool named_in(const std::vector<std::string>& names, std::string_view module) {
  for (const auto& n : names) {
    if (contains(n, module)) return true;
  }
  return false;
}

// Whether the format quantizes this linear map (per the quantizers' module selection).
bool quantized(const Quantization& q, const LinearMap& m) {
  if (q.method == QuantMethod::mxfp4) {
    // gpt-oss: only the experts' gate_up/down projections are MXFP4.
    return m.copies > 1 && !named_in(q.not_converted, "experts");
  }
  if (named_in(q.not_converted, m.name)) return false;
  if (m.attention && (named_in(q.not_converted, "self_attn") || named_in(q.not_converted, "attn")))
    return false;
  if (!m.attention && (named_in(q.not_converted, "mlp") || named_in(q.not_converted, "experts")))
    return false;
  return true;
}

// Stored bytes of one d_in x d_out weight under `q`. Layouts (docs/models.md):
//   bnb 4-bit (bitsandbytes functional.quantize_4bit, blocksize 64): ceil(n/2) packed bytes, an
//     fp32 absmax per block and a 16-entry fp32 code; double quant (compress_statistics): absmax as
//     uint8, an fp32 absmax per 256 of them, a 256-entry fp32 nested code and an fp32 offset.
//   bnb 8-bit (Int8Params): n int8 + an fp32 SCB per output row.
//   GPTQ (AutoGPTQ QuantLinear): qweight int32 [in*bits/32, out], qzeros int32
//     [groups, out*bits/32], scales fp16 [groups, out], g_idx int32 [in].
//   AWQ (AutoAWQ WQLinear_GEMM): qweight, qzeros as GPTQ, scales fp16 [groups, out], no g_idx.
//   fp8 (transformers FP8Linear): n bytes + an fp32 scale_inv per block (or per tensor).
//   compressed-tensors int: packed n*bits/8 + bf16 scales per channel/group; fp8: n + bf16 scales.
//   nvfp4: n/2 + an e4m3 scale per 16 + fp32 global scales; mxfp4: n/2 + an e8m0 scale per 32.
std::optional<std::uint64_t> map_bytes(const Quantization& q, std::uint64_t d_in,
                                       std::uint64_t d_out) {
  const auto n_opt = checked_mul(d_in, d_out);
  if (!n_opt) return std::nullopt;
  const std::uint64_t n = *n_opt;
  CheckedSum s;
  switch (q.method) {
    case QuantMethod::bnb_4bit: {
      const std::uint64_t blocks = ceil_div(n, 64);
      s.add(ceil_div(n, 2)).add(16 * 4);
      if (q.double_quant) {
        s.add(blocks).add_product(ceil_div(blocks, 256), 4).add(256 * 4).add(4);
      } else {
        s.add_product(blocks, 4);
      }
      break;
    }
    case QuantMethod::bnb_8bit:
      s.add(n).add_product(d_out, 4);
      break;
    case QuantMethod::gptq:
    case QuantMethod::awq: {
      const std::uint64_t g = q.group_size.value_or(d_in);
      const std::uint64_t groups = ceil_div(d_in, g);
      const auto in_bits = checked_mul(d_in, q.bits);
      const auto out_bits = checked_mul(d_out, q.bits);
      if (!in_bits || !out_bits) return std::nullopt;
      s.add_product(ceil_div(*in_bits, 32), d_out, 4);  // 3-bit packs across int32 boundaries
      s.add_product(groups, ceil_div(*out_bits, 32), 4);
      s.add_product(groups, d_out, 2);
      if (q.method == QuantMethod::gptq) s.add_product(d_in, 4);
      break;
    }
    case QuantMethod::fp8:
      s.add(n);
      if (q.block_rows && q.block_cols) {
        s.add_product(ceil_div(d_out, *q.block_rows), ceil_div(d_in, *q.block_cols), 4);
      } else {
        s.add(4);
      }
      break;
    case QuantMethod::compressed_tensors: {
      s.add(q.bits == 4 ? ceil_div(n, 2) : n);
      const std::uint64_t groups = q.group_size ? ceil_div(d_in, *q.group_size) : 1;
      s.add_product(d_out, groups, 2);
      break;
    }
    case QuantMethod::nvfp4:
      s.add(ceil_div(n, 2)).add(ceil_div(n, q.group_size.value_or(16))).add(2 * 4);
      break;
    case QuantMethod::mxfp4:
      s.add(ceil_div(n, 2)).add(ceil_div(n, 32));
      break;
    case QuantMethod::gguf:
      return std::nullopt;  // GGUF bytes come from the file's own tensor table
  }
  if (!s.ok()) return std::nullopt;
  return s.value();
}

}  // namespace

Status derive_quantized_bytes(const Architecture& a, Quantization& q) {
  const ParamCounts c = count_params(a);
  CheckedSum stored;
  CheckedSum quantized_elements;
  for (const auto& m : layer_linears(a)) {
    if (!quantized(q, m)) continue;
    const auto one = map_bytes(q, m.d_in, m.d_out);
    if (!one) return fail(Errc::malformed, "quantized weight size overflows");
    stored.add_product(*one, m.copies, a.layers);
    const auto n = checked_mul(m.d_in, m.d_out);
    if (!n) return fail(Errc::malformed, "quantized weight size overflows");
    quantized_elements.add_product(*n, m.copies, a.layers);
  }
  if (q.lm_head_quantized && !a.tied_embeddings) {
    if (const auto head = map_bytes(q, a.hidden, a.vocab)) {
      stored.add(*head);
      quantized_elements.add_product(a.hidden, a.vocab);
    }
  }
  if (!stored.ok() || !quantized_elements.ok() || quantized_elements.value() > c.total) {
    return fail(Errc::malformed, "quantized weight size overflows");
  }
  // Everything else (embeddings, lm_head, norms, biases, routers) stays in the 16-bit dtype.
  stored.add_product(c.total - quantized_elements.value(), 2);
  if (!stored.ok()) return fail(Errc::malformed, "quantized weight size overflows");
  q.weight_bytes = stored.value();
  q.exact = false;
  return {};
}

}  // namespace sparkops::models

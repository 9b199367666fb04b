#include "plan/plan_args.hpp"

#include <tuple>

#include <fmt/format.h>

#include "base/text.hpp"
#include "base/units.hpp"
#include "plan/frameworks.hpp"
#include "plan/sharding.hpp"
#include "plan/transformers_version.hpp"

namespace sparkops::plan {

Result<std::vector<std::uint64_t>> parse_count_list(std::string_view text, std::string_view flag) {
  std::vector<std::uint64_t> out;
  for (const auto part : split(text, ',')) {
    const auto v = parse_u64(part);
    if (!v || *v == 0) {
      return fail(Errc::invalid_argument, fmt::format("{}: {} is not a positive whole number", flag,
                                                      quote_for_message(part)));
    }
    out.push_back(*v);
  }
  if (out.empty()) return fail(Errc::invalid_argument, fmt::format("{}: empty", flag));
  return out;
}

// "70B", "7.6e9", "8030261248", "1.5T", "350M".
Result<std::uint64_t> parse_param_count(std::string_view text) {
  const auto t = trim(text);
  double scale = 1;
  std::string_view number = t;
  if (!t.empty()) {
    switch (t.back()) {
      case 'T':
      case 't':
        scale = 1e12;
        break;
      case 'B':
      case 'b':
        scale = 1e9;
        break;
      case 'M':
      case 'm':
        scale = 1e6;
        break;
      case 'K':
      case 'k':
        scale = 1e3;
        break;
      default:
        break;
    }
    if (scale != 1) number = t.substr(0, t.size() - 1);
  }
  const auto v = parse_double(number);
  if (!v || !(*v > 0) || *v * scale > 1e15) {
    return fail(Errc::invalid_argument,
                fmt::format("--params: {} is not a parameter count", quote_for_message(text)));
  }
  return static_cast<std::uint64_t>(*v * scale + 0.5);
}

namespace {

// A bitsandbytes release as one number (0.43.1 -> 43001). "0.42.0", "0.43", "0.45.5".
Result<std::uint64_t> bnb_version_key(std::string_view v) {
  std::uint64_t part[3] = {0, 0, 0};
  std::size_t n = 0;
  for (const auto p : split(v, '.')) {
    const auto x = parse_u64(p);
    if (!x || n == 3)
      return fail(
          Errc::invalid_argument,
          fmt::format("--bnb-version: {} is not a version like 0.43.1", quote_for_message(v)));
    part[n++] = *x;
  }
  if (n < 2)
    return fail(
        Errc::invalid_argument,
        fmt::format("--bnb-version: {} is not a version like 0.43.1", quote_for_message(v)));
  return part[0] * 1000000 + part[1] * 1000 + part[2];
}

Status optional_count(const std::string& text, std::string_view flag,
                      std::optional<std::uint64_t>& out) {
  if (text.empty()) return {};
  auto v = parse_count_list(text, flag);
  if (!v) return tl::unexpected(v.error());
  if (v->size() != 1)
    return fail(Errc::invalid_argument, fmt::format("{}: one value expected", flag));
  out = v->front();
  return {};
}

// A flag with two spellings: whether `text` is `first`; anything else is an error naming the flag
// and both spellings.
Result<bool> is_first_of_two(std::string_view text, std::string_view flag, std::string_view first,
                             std::string_view second) {
  if (text != first && text != second)
    return fail(Errc::invalid_argument, fmt::format("{}: unknown value {} (one of {}|{})", flag,
                                                    quote_for_message(text), first, second));
  return text == first;
}

}  // namespace

Result<PlanInput> plan_input(const PlanArgs& f) {
  PlanInput in;
  in.model.name = f.model;
  if (!f.params.empty()) {
    auto p = parse_param_count(f.params);
    if (!p) return tl::unexpected(p.error());
    in.model.params = *p;
  }
  if (f.model.empty() && !in.model.params) {
    return fail(Errc::invalid_argument, "plan: give a MODEL, --params or --list");
  }
  if (!f.model.empty() && in.model.params) {
    return fail(Errc::invalid_argument, fmt::format("--params: contradicts MODEL {}", f.model));
  }
  ArchOverrides& a = in.model.arch;
  for (const auto& [text, flag, out] :
       {std::tuple{&f.hidden, "--hidden", &a.hidden}, std::tuple{&f.layers, "--layers", &a.layers},
        std::tuple{&f.heads, "--heads", &a.heads},
        std::tuple{&f.kv_heads, "--kv-heads", &a.kv_heads},
        std::tuple{&f.intermediate, "--intermediate", &a.intermediate},
        std::tuple{&f.vocab, "--vocab", &a.vocab}}) {
    if (auto s = optional_count(*text, flag, *out); !s) return tl::unexpected(s.error());
  }
  if (f.tied) a.tied = true;
  if (!f.mlp.empty() && f.mlp != "gated" && f.mlp != "plain")
    return fail(
        Errc::invalid_argument,
        fmt::format("--mlp: unknown value \"{}\" (one of gated|plain)", quote_for_message(f.mlp)));
  if (!f.norm.empty() && f.norm != "rms" && f.norm != "layer")
    return fail(
        Errc::invalid_argument,
        fmt::format("--norm: unknown value \"{}\" (one of rms|layer)", quote_for_message(f.norm)));
  in.model.mlp = f.mlp;
  in.model.norm = f.norm;
  in.model.parallel_block = f.parallel_block;
  if (!in.model.params && (!f.mlp.empty() || !f.norm.empty() || f.parallel_block))
    return fail(Errc::invalid_argument, "--mlp/--norm/--parallel-block: need --params");
  if (!in.model.params && a.any()) {
    return fail(Errc::invalid_argument, "--hidden/--layers/...: architecture flags need --params");
  }

  RunConfig& r = in.run;
  auto method = parse_method(f.method);
  if (!method) return tl::unexpected(method.error());
  r.method = *method;
  auto framework = parse_framework(f.framework.empty() ? "hf" : f.framework);
  if (!framework) return tl::unexpected(framework.error());
  apply_framework(*framework, r);
  // No framework named: the same flags under every other preset, for the plan's range. A preset
  // the flags contradict is left out of it.
  if (f.framework.empty()) {
    for (const auto& preset : framework_presets()) {
      if (preset.id == *framework) continue;
      PlanArgs other = f;
      other.framework = std::string(preset.name);
      if (auto alt = plan_input(other)) in.framework_alternatives.push_back(alt->run);
    }
  }
  auto precision = parse_precision(f.precision);
  if (!precision) return tl::unexpected(precision.error());
  r.precision = *precision;
  if (!f.optim.empty()) {
    auto optim = parse_optim(f.optim);
    if (!optim) return tl::unexpected(optim.error());
    r.optim = *optim;
  }
  if (!f.grad_ckpt.empty()) {
    auto ckpt = parse_grad_ckpt(f.grad_ckpt);
    if (!ckpt) return tl::unexpected(ckpt.error());
    r.grad_ckpt = *ckpt;
  }
  if (!f.attn.empty()) {
    auto attn = parse_attn(f.attn);
    if (!attn) return tl::unexpected(attn.error());
    r.attn = *attn;
  }
  auto batch = parse_count_list(f.batch, "--batch");
  if (!batch) return tl::unexpected(batch.error());
  r.batch = batch->front();
  auto seq = parse_count_list(f.seq, "--seq");
  if (!seq) return tl::unexpected(seq.error());
  r.seq = seq->front();
  std::optional<std::uint64_t> rank;
  if (auto s = optional_count(f.lora_rank, "--lora-rank", rank); !s)
    return tl::unexpected(s.error());
  if (rank) r.lora_rank = *rank;  // else the preset's, or RunConfig's 16
  if (f.lora_targets == "all-linear") {
    r.lora_targets = LoraTargets::all_linear;
  } else if (f.lora_targets == "attn") {
    r.lora_targets = LoraTargets::attn;
  } else {
    r.lora_targets = LoraTargets::list;
    for (const auto t : split(f.lora_targets, ',')) {
      if (trim(t).empty())
        return fail(Errc::invalid_argument, "--lora-targets: empty name in the list");
      r.lora_target_names.emplace_back(trim(t));
    }
  }
  r.kbit_prep = f.kbit_prep ? KbitPrep::on : KbitPrep::off;
  if (f.kept_fp16 && r.method != Method::qlora)
    return fail(Errc::invalid_argument, "--kept-fp16: only meaningful with --method qlora");
  r.qlora_kept_fp16 = f.kept_fp16;
  if (f.lora_head && r.method == Method::full)
    return fail(Errc::invalid_argument, "--lora-head: only meaningful with LoRA or QLoRA");
  r.lora_head = f.lora_head;
  r.compiled = f.compile;
  // The transformers release picks the HF loss program where the preset's loss is the HF model's
  // own (hf, axolotl, llamafactory, swift); an explicit --loss (or --chunked-loss) wins over it.
  if (!f.transformers.empty()) {
    auto v = parse_transformers_version(f.transformers);
    if (!v) return tl::unexpected(v.error());
    r.transformers = v->text();
    if (f.loss.empty() && !f.chunked_loss && is_hf_model_loss(r.loss)) r.loss = hf_loss_for(*v);
    // A framework on the HF Trainer (its preset names a transformers release) keeps
    // TrainingArguments' default optimizer unless --optim names another: fused from 4.54.
    if (!framework_preset(r.framework).transformers.empty() && r.optim == Optim::adamw)
      r.fused_adamw = trainer_defaults_to_fused_adamw(*v);
  }
  if (f.chunked_loss && !f.loss.empty() && f.loss != "chunked")
    return fail(Errc::invalid_argument, "--chunked-loss: contradicts --loss " + f.loss);
  if (f.chunked_loss) r.loss = LossKind::chunked;
  if (!f.loss.empty()) {
    auto loss = parse_loss(f.loss);
    if (!loss) return tl::unexpected(loss.error());
    r.loss = *loss;
  }
  if (!f.lora_dropout.empty()) {
    const auto p = parse_double(f.lora_dropout);
    if (!p || !(*p >= 0.0 && *p < 1.0))
      return fail(Errc::invalid_argument,
                  fmt::format("--lora-dropout: {} is not a probability in [0, 1)",
                              quote_for_message(f.lora_dropout)));
    r.lora_dropout = *p;
  }
  if (!f.adapter_dtype.empty()) {
    auto fp32 = is_first_of_two(f.adapter_dtype, "--adapter-dtype", "fp32", "model");
    if (!fp32) return tl::unexpected(fp32.error());
    r.adapter_fp32 = *fp32;
  }
  if (!f.bnb_version.empty()) {
    auto key = bnb_version_key(f.bnb_version);
    if (!key) return tl::unexpected(key.error());
    // MatMul4Bit keeps `ctx.tensors = (A, B)` up to 0.43.1 and `(None, B)` from 0.43.2
    // (bitsandbytes/autograd/_functions.py, PR #1270).
    r.bnb_saves_input = *key <= 43001;
    // Params4bit.cuda quantizes `self.data.contiguous().half()` up to 0.42.0 (nn/modules.py;
    // commit dcfb6f81, "Initial FSDP Support for QLoRA Finetuning", first released in 0.43.0,
    // quantizes the weight in its own dtype): quant_state.dtype is fp16, so each dequantization
    // in a bf16 run is followed by a full .to(bf16) copy. (Lightning Fabric quantizes from
    // fp16 itself at any release: the litgpt preset's value stands.)
    if (*key < 43000) r.bnb_quant_fp16 = true;
  }
  if (f.no_double_quant) r.double_quant = DoubleQuant::off;
  if (f.no_double_quant && r.method != Method::qlora) {
    return fail(Errc::invalid_argument, "--no-double-quant: only meaningful with --method qlora");
  }
  auto packed = is_first_of_two(f.lengths, "--lengths", "fixed", "varying");
  if (!packed) return tl::unexpected(packed.error());
  r.packed = *packed;
  r.expandable_segments = f.expandable_segments;
  std::optional<std::uint64_t> nodes;
  if (auto s = optional_count(f.nodes, "--nodes", nodes); !s) return tl::unexpected(s.error());
  r.nodes = nodes.value_or(1);
  std::optional<std::uint64_t> gpus, accum;
  if (auto s = optional_count(f.gpus, "--gpus", gpus); !s) return tl::unexpected(s.error());
  r.gpus = gpus.value_or(1);
  if (auto s = optional_count(f.grad_accum, "--grad-accum", accum); !s)
    return tl::unexpected(s.error());
  // Not given: what the framework accumulates by default at this batch and rank count.
  r.grad_accum = accum ? *accum : framework_grad_accum(r.framework, r.batch, r.nodes * r.gpus);
  // One plan per rank: more than 2^16 ranks is no data-parallel job this models.
  if (r.nodes > 65536 || r.gpus > 65536 || r.nodes * r.gpus > 65536)
    return fail(Errc::invalid_argument, "--nodes/--gpus: at most 65536 ranks");
  apply_framework_topology(r, !f.optim.empty());
  if (!f.optimizer_in_bwd.empty()) {
    auto on = is_first_of_two(f.optimizer_in_bwd, "--optimizer-in-bwd", "on", "off");
    if (!on) return tl::unexpected(on.error());
    r.optimizer_in_backward = *on;
    if (r.optimizer_in_backward && r.method != Method::full)
      return fail(Errc::invalid_argument,
                  "--optimizer-in-bwd: only a full fine-tune steps in backward here");
    if (r.optimizer_in_backward && r.grad_accum > 1)
      return fail(Errc::invalid_argument,
                  "--optimizer-in-bwd: the gradients are stepped as they arrive, so there is "
                  "nothing to accumulate: needs --grad-accum 1");
  }
  if (!f.shard.empty()) {
    auto shard = parse_shard(f.shard);
    if (!shard) return tl::unexpected(shard.error());
    r.shard = *shard;
  }
  if (f.budget != "auto") {
    auto b = parse_bytes(f.budget, DefaultUnit::gib);
    if (!b || *b == 0) {
      return fail(Errc::invalid_argument,
                  fmt::format("--budget: {} is not a size or auto", quote_for_message(f.budget)));
    }
    in.budget_bytes = *b;
  }
  if (!f.overhead.empty() && in.budget_bytes) {
    return fail(Errc::invalid_argument, "--overhead: applies only with --budget auto");
  }
  if (!f.overhead.empty()) {
    auto o = parse_bytes(f.overhead, DefaultUnit::gib);
    if (!o) {
      return fail(Errc::invalid_argument,
                  fmt::format("--overhead: {} is not a size", quote_for_message(f.overhead)));
    }
    in.overhead_bytes = *o;
  }
  if (!f.device_total.empty()) {
    auto t = parse_device_total(f.device_total);
    if (!t) return tl::unexpected(t.error());
    in.device_total_bytes = *t;
  }
  return in;
}

Result<std::uint64_t> parse_device_total(std::string_view text) {
  auto t = parse_bytes(text, DefaultUnit::gib);
  if (!t) {
    return fail(Errc::invalid_argument,
                fmt::format("--device-total: {} is not a size", quote_for_message(text)));
  }
  if (*t == 0) return fail(Errc::invalid_argument, "--device-total: must be positive");
  // No device holds more; a larger figure is a typo (units), not a machine.
  if (*t > kMaxDeviceTotal) {
    return fail(Errc::invalid_argument,
                fmt::format("--device-total: {} is more than 16 TiB", quote_for_message(text)));
  }
  return *t;
}

}  // namespace sparkops::plan

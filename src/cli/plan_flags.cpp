#include "cli/plan_flags.hpp"

#include <fmt/format.h>

#include "base/text.hpp"
#include "base/units.hpp"

namespace sparkops::cli {

void add_plan_flags(CLI::App* cmd, PlanFlags& f) {
  cmd->add_option("MODEL", f.model,
                  "A model directory, config.json, .safetensors file or index, or .gguf; "
                  "ORG/NAME[@REV] from the Hugging Face cache, else the Hub (`plan` only; headers "
                  "only; HF_HUB_OFFLINE=1 stays offline); or a catalogue name (see --list)");
  cmd->add_option("--params", f.params,
                  "Bare parameter count instead of MODEL: 70B, 7.6e9, 8030261248");
  cmd->add_option("--hidden", f.hidden, "With --params: hidden size");
  cmd->add_option("--layers", f.layers, "With --params: number of layers");
  cmd->add_option("--heads", f.heads, "With --params: attention heads");
  cmd->add_option("--kv-heads", f.kv_heads, "With --params: key/value heads (GQA)");
  cmd->add_option("--intermediate", f.intermediate, "With --params: MLP intermediate size");
  cmd->add_option("--vocab", f.vocab, "With --params: vocabulary size");
  cmd->add_flag("--tied", f.tied, "With --params: input and output embeddings are tied");
  cmd->add_option("--method", f.method, "full | lora | qlora")->capture_default_str();
  cmd->add_option("--precision", f.precision,
                  "bf16 | fp16 | fp32 | mixed (mixed = fp32 master weights)")
      ->capture_default_str();
  cmd->add_option("--optim", f.optim, "adamw | adamw8bit | paged_adamw8bit | adafactor | sgd")
      ->capture_default_str();
  cmd->add_option("--batch", f.batch, "Micro-batch size; a list (1,2,4) prints a fit matrix")
      ->capture_default_str();
  cmd->add_option("--seq", f.seq, "Sequence/packing length; a list (1024,2048) prints a fit matrix")
      ->capture_default_str();
  cmd->add_option("--grad-ckpt", f.grad_ckpt,
                  "none | full | offload (offload stays in the pool on UMA)")
      ->capture_default_str();
  cmd->add_option("--attn", f.attn, "flash | sdpa | eager")->capture_default_str();
  cmd->add_option("--lora-rank", f.lora_rank, "LoRA rank r")->capture_default_str();
  cmd->add_option("--lora-targets", f.lora_targets, "all-linear | attn | a list: q_proj,v_proj,...")
      ->capture_default_str();
  cmd->add_flag("--kbit-prep", f.kbit_prep,
                "QLoRA: prepare_model_for_kbit_training (fp32 upcast of the kept layers)");
  cmd->add_flag("--chunked-loss", f.chunked_loss, "Chunked/fused cross-entropy (no fp32 logits)");
  cmd->add_flag("--no-double-quant", f.no_double_quant, "QLoRA: NF4 without double quantization");
  cmd->add_option("--nodes", f.nodes, "FSDP across N machines")->capture_default_str();
  cmd->add_option("--budget", f.budget,
                  "Memory budget: GB (bare number = GiB, as free -g) or auto (live pool, --root)")
      ->capture_default_str();
  cmd->add_option(
      "--overhead", f.overhead,
      "OS/driver overhead subtracted from MemAvailable (default: config pool.overhead)");
}

Result<std::vector<std::uint64_t>> parse_count_list(std::string_view text, std::string_view flag) {
  std::vector<std::uint64_t> out;
  for (const auto part : split(text, ',')) {
    const auto v = parse_u64(part);
    if (!v || *v == 0) {
      return fail(Errc::invalid_argument, fmt::format("{}: \"{}\" is not a positive whole number",
                                                      flag, quote_for_message(part)));
    }
    out.push_back(*v);
  }
  if (out.empty()) return fail(Errc::invalid_argument, fmt::format("{}: empty", flag));
  return out;
}

namespace {

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
                fmt::format("--params: \"{}\" is not a parameter count", quote_for_message(text)));
  }
  return static_cast<std::uint64_t>(*v * scale + 0.5);
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

}  // namespace

Result<plan::PlanInput> plan_input_from_flags(const PlanFlags& f) {
  plan::PlanInput in;
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
  plan::ArchOverrides& a = in.model.arch;
  for (const auto& [text, flag, out] :
       {std::tuple{&f.hidden, "--hidden", &a.hidden}, std::tuple{&f.layers, "--layers", &a.layers},
        std::tuple{&f.heads, "--heads", &a.heads},
        std::tuple{&f.kv_heads, "--kv-heads", &a.kv_heads},
        std::tuple{&f.intermediate, "--intermediate", &a.intermediate},
        std::tuple{&f.vocab, "--vocab", &a.vocab}}) {
    if (auto s = optional_count(*text, flag, *out); !s) return tl::unexpected(s.error());
  }
  if (f.tied) a.tied = true;
  if (!in.model.params && a.any()) {
    return fail(Errc::invalid_argument, "--hidden/--layers/...: architecture flags need --params");
  }

  plan::RunConfig& r = in.run;
  auto method = plan::parse_method(f.method);
  if (!method) return tl::unexpected(method.error());
  r.method = *method;
  auto precision = plan::parse_precision(f.precision);
  if (!precision) return tl::unexpected(precision.error());
  r.precision = *precision;
  auto optim = plan::parse_optim(f.optim);
  if (!optim) return tl::unexpected(optim.error());
  r.optim = *optim;
  auto ckpt = plan::parse_grad_ckpt(f.grad_ckpt);
  if (!ckpt) return tl::unexpected(ckpt.error());
  r.grad_ckpt = *ckpt;
  auto attn = plan::parse_attn(f.attn);
  if (!attn) return tl::unexpected(attn.error());
  r.attn = *attn;
  auto batch = parse_count_list(f.batch, "--batch");
  if (!batch) return tl::unexpected(batch.error());
  r.batch = batch->front();
  auto seq = parse_count_list(f.seq, "--seq");
  if (!seq) return tl::unexpected(seq.error());
  r.seq = seq->front();
  std::optional<std::uint64_t> rank;
  if (auto s = optional_count(f.lora_rank, "--lora-rank", rank); !s)
    return tl::unexpected(s.error());
  r.lora_rank = rank.value_or(16);
  if (f.lora_targets == "all-linear") {
    r.lora_targets = plan::LoraTargets::all_linear;
  } else if (f.lora_targets == "attn") {
    r.lora_targets = plan::LoraTargets::attn;
  } else {
    r.lora_targets = plan::LoraTargets::list;
    for (const auto t : split(f.lora_targets, ',')) {
      if (trim(t).empty())
        return fail(Errc::invalid_argument, "--lora-targets: empty name in the list");
      r.lora_target_names.emplace_back(trim(t));
    }
  }
  r.kbit_prep = f.kbit_prep ? plan::KbitPrep::on : plan::KbitPrep::off;
  r.chunked_loss = f.chunked_loss ? plan::ChunkedLoss::on : plan::ChunkedLoss::off;
  r.double_quant = f.no_double_quant ? plan::DoubleQuant::off : plan::DoubleQuant::on;
  if (f.no_double_quant && r.method != plan::Method::qlora) {
    return fail(Errc::invalid_argument, "--no-double-quant: only meaningful with --method qlora");
  }
  std::optional<std::uint64_t> nodes;
  if (auto s = optional_count(f.nodes, "--nodes", nodes); !s) return tl::unexpected(s.error());
  r.nodes = nodes.value_or(1);
  if (f.budget != "auto") {
    auto b = parse_bytes(f.budget, DefaultUnit::gib);
    if (!b || *b == 0) {
      return fail(Errc::invalid_argument, fmt::format("--budget: \"{}\" is not a size or auto",
                                                      quote_for_message(f.budget)));
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
                  fmt::format("--overhead: \"{}\" is not a size", quote_for_message(f.overhead)));
    }
    in.overhead_bytes = *o;
  }
  return in;
}

}  // namespace sparkops::cli

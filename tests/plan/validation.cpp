#include "validation.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/text.hpp"
#include "models/catalogue.hpp"
#include "plan/frameworks.hpp"

namespace sparkops::plan::validation {

// RFC 4180: commas inside double quotes, "" for a literal quote, no newlines inside fields here.
std::vector<std::string> csv_fields(std::string_view line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

namespace {

std::optional<std::uint64_t> count(std::string_view s) {
  std::string t(trim(s));
  if (starts_with(t, "<=")) t = t.substr(2);
  if (const auto sp = t.find(' '); sp != std::string::npos) t = t.substr(0, sp);
  return parse_u64(t);
}

// Models whose MLP is fc1/fc2 with GELU (their configs: GPT-2 style, Falcon, Phi-2, GPT-NeoX).
bool plain_mlp(std::string_view model) {
  return contains(model, "GPT (from scratch)") || contains(model, "falcon") ||
         contains(model, "phi-2") || contains(model, "stablelm");
}

// The LoRA settings of the config-hub yaml each LitGPT row ran, where they differ from the CSV's
// "q,v (default yaml)" note: Lightning-AI/litgpt config_hub/finetune/<model>/{lora,qlora}.yaml
// at 43c44323 (the automated table, Apr 2024), gemma2-9b/*.yaml at 916a84ca (its row's commit).
// `lora_query/key/value/projection/mlp/head: true` is every linear map plus the lm_head.
struct LitgptLora {
  std::string_view id;
  std::uint64_t rank;
  double dropout;
};
const LitgptLora* litgpt_lora(std::string_view id) {
  static constexpr LitgptLora kRows[] = {
      {"L04", 8, 0.1},    // gemma-2b/lora.yaml
      {"L05", 16, 0.1},   // gemma-2b/qlora.yaml
      {"L06", 16, 0.1},   // gemma-7b/lora.yaml
      {"L07", 16, 0.1},   // gemma-7b/qlora.yaml
      {"L08", 16, 0.1},   // gemma2-9b/lora.yaml (916a84ca)
      {"L09", 16, 0.1},   // gemma2-9b/qlora.yaml (916a84ca)
      {"L16", 8, 0.05},   // phi-2/lora.yaml
      {"L21", 32, 0.05},  // tiny-llama/lora.yaml
  };
  for (const auto& y : kRows)
    if (y.id == id) return &y;
  return nullptr;
}

// Micro-batches per optimizer step of each LitGPT row's yaml (global_batch_size /
// micro_batch_size / devices, at the same commits): `.grad` lives across them.
std::uint64_t litgpt_accum(std::string_view id) {
  static constexpr std::pair<std::string_view, std::uint64_t> kRows[] = {
      {"L01", 8}, {"L02", 8}, {"L04", 3}, {"L05", 3}, {"L06", 6}, {"L07", 6}, {"L08", 6},
      {"L09", 6}, {"L10", 4}, {"L11", 4}, {"L12", 8}, {"L13", 4}, {"L14", 4}, {"L15", 4},
      {"L16", 2}, {"L18", 8}, {"L19", 8}, {"L20", 8}, {"L21", 1}};
  for (const auto& [row, accum] : kRows)
    if (row == id) return accum;
  return 1;
}

}  // namespace

const char* config_layer_program(std::string_view model) {
  return icontains(model, "GPT (from scratch)")    ? "gpt2"
         : icontains(model, "phi-2")               ? "phi"
         : icontains(model, "stablelm-base-alpha") ? "gpt_neox"
         : icontains(model, "falcon")              ? "falcon"
                                                   : nullptr;
}

void take_layer_program(ModelShape& shape, const char* family, double params_b) {
  shape.arch.family = family;
  shape.arch.needs_eager_attention = false;
  shape.arch.post_norms = false;
  shape.arch.qk_norm = false;
  shape.arch.mlp = models::MlpKind::plain;
  ParamCounts c = count_params(shape.arch);
  const std::uint64_t total = static_cast<std::uint64_t>(params_b * 1e9);
  const std::uint64_t fixed = c.embedding + c.lm_head + c.other;
  if (total > fixed) {
    c.linear = total - fixed;
    c.total = c.active = total;
  }
  shape.params = c;
}

std::uint64_t cublas_workspace_for(std::string_view hardware) {
  for (const char* sm9_or_later :
       {"H100", "H200", "H800", "H20", "GH200", "B200", "GB10", "Spark", "Thor"})
    if (icontains(hardware, sm9_or_later)) return kCublasWorkspaceHopperBytes;
  return kCublasWorkspaceOlderBytes;
}

std::optional<std::uint64_t> device_total_for(std::string_view hardware) {
  constexpr double GiB = 1024.0 * 1024.0 * 1024.0, MiB = 1024.0 * 1024.0;
  const auto bytes = [](double v) { return static_cast<std::uint64_t>(v); };
  if (icontains(hardware, "likely")) return std::nullopt;  // a guess is not a statement
  // A100 80GB: "GPU 2 has a total capacity of 79.25 GiB" (torch 2.x OOM message on 4x A100
  // 80GB, wbfwonderful/Vad-R1 issue #11); A100 40GB: 39.50 GiB (TianheWu/CoSeR issue #10).
  if (icontains(hardware, "A100")) {
    if (icontains(hardware, "80G")) return bytes(79.25 * GiB);
    if (icontains(hardware, "40G")) return bytes(39.50 * GiB);
    return std::nullopt;
  }
  // A10G: get_device_properties total_memory=22587MB (MiB), TorchCodec's CUDA decoding tutorial.
  if (icontains(hardware, "A10G")) return bytes(22587 * MiB);
  // H100 80GB HBM3: total_memory=81089MB (torch 2.7, CUDA 12.8, an all_reduce benchmark's
  // environment printout).
  if (icontains(hardware, "H100") && icontains(hardware, "80G")) return bytes(81089 * MiB);
  // RTX 4090: "23.68 GiB total capacity" (zai-org/CogVideo issue #36); RTX 3090: global memory
  // 25,286,672,384 B (Jumperkables/cuda-benchmarking 00_deviceQuery/README.md); RTX A6000:
  // total_memory=48676MB (a get_device_properties printout in a Triton kernel's README).
  if (icontains(hardware, "4090")) return bytes(23.68 * GiB);
  if (icontains(hardware, "3090")) return 25286672384ULL;
  if (icontains(hardware, "A6000")) return bytes(48676 * MiB);
  return std::nullopt;
}

// torchtune README rows whose recipe config at the table's commit (30b8519e, "Memory and training
// speed": batch 2, packed, torch.compile on) states everything the estimate needs: activation
// checkpointing on, no offloading, CEWithChunkedOutputLoss (compiled per chunk), the LoRA
// targets and rank of recipes/configs/llama3_1/8B_{lora,qlora}_single_device.yaml, and
// 8B_full_single_device.yaml's PagedAdamW8bit stepped in backward (the preset's one-GPU full
// fine-tune). T02 lists that recipe at 37.4 GiB on an A6000 (twice T01 on a 4090: not the same
// settings, which it does not state) and T04's A6000 settings are not stated: shown, not counted.
struct TorchtuneRecipe {
  const char* id;
  std::vector<std::string> targets;
  std::uint64_t rank;
};
const TorchtuneRecipe* torchtune_recipe(std::string_view id) {
  static const std::vector<TorchtuneRecipe> recipes = {
      {"T01", {}, 0},
      {"T03", {"q_proj", "v_proj"}, 8},
      {"T05", {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}, 8}};
  for (const auto& r : recipes)
    if (id == r.id) return &r;
  return nullptr;
}

std::vector<Row> evaluate(const std::string& csv_text) {
  std::vector<Row> rows;
  const auto lines = split_lines(csv_text);
  if (lines.empty()) return rows;
  const auto header = csv_fields(lines[0]);
  auto col = [&](const std::vector<std::string>& f, std::string_view name) -> std::string {
    for (std::size_t i = 0; i < header.size() && i < f.size(); ++i) {
      if (trim(header[i]) == name) return std::string(trim(f[i]));
    }
    return {};
  };
  for (std::size_t n = 1; n < lines.size(); ++n) {
    if (trim(lines[n]).empty()) continue;
    const auto f = csv_fields(lines[n]);
    Row r;
    r.id = col(f, "id");
    r.model = col(f, "model");
    r.method_text = col(f, "method");
    const std::string kind = col(f, "data_kind");
    const std::string peak = col(f, "peak_GB");
    r.measured_text = peak + " " + std::string(split(col(f, "peak_unit_metric"), ' ')[0]);
    const std::string unit = col(f, "peak_unit_metric");
    const std::string ckpt = col(f, "grad_ckpt");
    const auto hidden = count(col(f, "hidden"));
    const auto layers = count(col(f, "layers"));
    const auto intermediate = count(col(f, "intermediate"));
    const auto vocab = count(col(f, "vocab"));
    const auto batch = count(col(f, "micro_batch"));
    const auto seq = count(col(f, "seq_len"));
    const auto peak_value = parse_double(peak);
    if (kind != "measured") {
      r.excluded_reason = kind;
    } else if (!peak_value) {
      r.excluded_reason = fmt::format("peak \"{}\" is not one number", peak);
    } else if (!hidden || !layers || !intermediate || !vocab || !batch || !seq) {
      r.excluded_reason = "architecture or batch/seq incomplete";
    } else if (ckpt != "yes" && ckpt != "no" && torchtune_recipe(r.id) == nullptr) {
      r.excluded_reason = fmt::format("grad_ckpt \"{}\"", ckpt);
    }
    if (r.excluded_reason.empty() && r.id == "L17") {
      // Full AdamW fine-tuning of 3.82B bf16 parameters needs 7.6 GB weights + 7.6 GB gradients +
      // 15.3 GB AdamW states before any activation: 30.6 GB cannot have run in 17 GB on a 24 GB
      // A10G. The figure matches a 4-GPU FSDP run (estimate shown in docs/estimator.md).
      r.excluded_reason =
          "infeasible as recorded: weights+gradients+AdamW alone are 30.6 GB on a 24 GB card";
    }
    r.fully_specified = r.excluded_reason.empty();
    if (starts_with(peak, "OOM")) {
      // "OOM (>~22)": the run did not fit in about this many GB.
      const auto tilde = peak.find('~');
      if (tilde != std::string::npos) {
        if (const auto v = parse_leading_double(peak.substr(tilde + 1)))
          r.oom_above_bytes = v->value * 1e9;
      }
    }
    if (!hidden || !layers || !intermediate || !vocab || !batch || !seq) {
      rows.push_back(std::move(r));
      continue;
    }
    r.measured_bytes = peak_value.value_or(0) * (starts_with(unit, "GiB") ? 1073741824.0 : 1e9);
    r.pool_metric = contains(unit, "nvidia-smi") || contains(unit, "VRAM");

    const std::string bare = std::string(split(r.model, '/').back());
    if (const auto* e = models::find_in_catalogue(bare)) {
      r.shape.name = e->name;
      r.shape.arch = e->arch;
      r.shape.params = count_params(e->arch);
    } else {
      models::ArchOverrides o;
      o.hidden = hidden;
      o.layers = layers;
      o.intermediate = intermediate;
      o.vocab = vocab;
      o.heads = count(col(f, "heads")).value_or(*hidden / 64);  // "?" -> head_dim 64
      o.kv_heads = count(col(f, "kv_heads")).value_or(*o.heads);
      o.tied = col(f, "tied_emb") == "yes";
      const double params_b = parse_double(col(f, "params_B")).value_or(0);
      auto shape =
          models::shape_from_params(static_cast<std::uint64_t>(params_b * 1e9), o, nullptr);
      if (!shape) {
        r.fully_specified = false;
        r.excluded_reason = shape.error().detail;
        rows.push_back(std::move(r));
        continue;
      }
      r.shape = *shape;
      r.shape.arch.mlp = plain_mlp(r.model) ? MlpKind::plain : MlpKind::gated;
      r.shape.arch.needs_eager_attention = false;
      r.shape.arch.post_norms = false;
      r.shape.arch.qk_norm = false;
      r.shape.arch.qkv_bias = false;
      // The layer program the row's config.json names (config_layer_program).
      if (const char* family = config_layer_program(r.model))
        take_layer_program(r.shape, family, params_b);
    }
    RunConfig& run = r.run;
    const std::string method = to_lower(r.method_text);
    run.method = starts_with(method, "qlora")  ? Method::qlora
                 : starts_with(method, "lora") ? Method::lora
                                               : Method::full;
    run.precision = Precision::bf16;
    run.optim = icontains(col(f, "optimizer"), "8bit") ? Optim::paged_adamw8bit : Optim::adamw;
    // "AdamW(fused)": torch's fused kernel keeps no foreach temporary at the step.
    run.fused_adamw = icontains(col(f, "optimizer"), "fused");
    run.batch = *batch;
    run.seq = *seq;
    // Excluded rows say "per config (mostly on)" / "HF default (on)": estimated with checkpointing.
    run.grad_ckpt = ckpt == "no" ? GradCkpt::none : GradCkpt::full;
    const std::string attn = col(f, "attn_impl");
    run.attn = icontains(attn, "eager")  ? Attn::eager
               : icontains(attn, "sdpa") ? Attn::sdpa
                                         : Attn::flash;
    if (run.method != Method::full) {
      run.lora_rank = count(col(f, "lora_r")).value_or(16);
      const std::string targets = col(f, "lora_targets");
      if (starts_with(targets, "q,v")) {
        run.lora_targets = LoraTargets::list;
        run.lora_target_names = {"q_proj", "v_proj"};
      } else {
        run.lora_targets = LoraTargets::all_linear;
      }
    }
    if (icontains(col(f, "notes"), "chunked CE")) run.loss = LossKind::chunked;
    // Unsloth's context-length table (U rows, Llama-3.1-8B: published with its July 2024 release,
    // before transformers 4.46): the HF + FA2 baseline ran LlamaForCausalLM's own loss, the
    // upcast logits and their shifted copy.
    if (icontains(col(f, "source"), "unslothai/unsloth") && icontains(col(f, "framework"), "HF"))
      run.loss = LossKind::hf_shifted;
    // LitGPT rows: the litgpt preset (src/plan/frameworks.cpp, sourced at the version the
    // config-hub table was measured with).
    if (icontains(col(f, "framework"), "litgpt") || icontains(col(f, "framework"), "lit-gpt")) {
      apply_framework(Framework::litgpt, run);
      run.grad_accum = litgpt_accum(r.id);
      if (const auto* y = litgpt_lora(r.id); y && run.method != Method::full) {
        run.lora_rank = y->rank;
        run.lora_dropout = y->dropout;
        run.lora_targets = LoraTargets::all_linear;
        run.lora_head = true;
      }
    }
    // The Megatron-Core rows (S04-S11) are a hand-written loop (ai-field-notes
    // articles/nemo-framework-on-spark/evidence/nemo_train.py, whose loop
    // baseline-training-loop-on-spark/evidence/sweep.py runs): `logits = model(x, ...)` then
    // `loss = F.cross_entropy(logits.float().view(-1, V), y.view(-1))`, so the loop's `logits`
    // (bf16, GPTModel's transposed copy) lives through backward and until the next step's forward
    // returns: the held-logits mechanism LitGPT's fit() has too. The same loop calls
    // `opt.zero_grad(set_to_none=True)` after the forward, just before `loss.backward()`, so the
    // previous step's gradients live through the forward.
    if (icontains(col(f, "framework"), "Megatron-Core")) {
      run.loop_holds_graph = true;
      run.zero_grad_before_backward = true;
    }
    if (const auto* t = torchtune_recipe(r.id)) {
      apply_framework(Framework::torchtune, run);
      apply_framework_topology(run, false);
      run.grad_ckpt = GradCkpt::full;
      run.compiled = true;
      if (run.method != Method::full) {
        run.lora_rank = t->rank;
        run.lora_targets = LoraTargets::list;
        run.lora_target_names = t->targets;
      }
    }
    const std::string hw = col(f, "hardware");
    run.cublas_workspace_bytes = cublas_workspace_for(hw);
    // The card's memory caps the allocator's cache (release_cached_blocks and a retry).
    run.device_reach_bytes = device_total_for(hw).value_or(0);
    if (const auto x = hw.find("x "); x != std::string::npos && icontains(r.method_text, "FSDP")) {
      // Several GPUs of one machine under the preset's wrapper (LitGPT: FSDP per Block);
      // config_hub/finetune/gemma-2b/full.yaml at 00af8b0d: devices 4, global_batch_size 16,
      // micro_batch_size 1, so 4 micro-batches accumulate under no_backward_sync.
      run.gpus = parse_u64(hw.substr(0, x)).value_or(1);
      if (r.id == "L03") run.grad_accum = 4;
    }
    const Estimate e = estimate(r.shape, run);
    // nvidia-smi/VRAM rows are discrete GPUs: the process's device memory (reserved + context),
    // not the host side a unified pool would also pay.
    r.pool_estimate_bytes = static_cast<double>(e.train_peak_device_bytes);
    r.estimate_bytes = static_cast<double>(r.pool_metric ? e.train_peak_device_bytes
                                                         : e.train_peak_allocated_bytes);
    r.estimated = true;
    if (r.measured_bytes > 0) r.error = r.estimate_bytes / r.measured_bytes - 1.0;
    rows.push_back(std::move(r));
  }
  return rows;
}

std::string markdown_table(const std::vector<Row>& rows) {
  std::string out =
      "| id | model | method | batch × seq | ckpt | measured | estimate | error |\n"
      "|---|---|---|---|---|---|---|---|\n";
  std::vector<double> errors;
  for (const auto& r : rows) {
    if (!r.fully_specified) continue;
    errors.push_back(std::fabs(r.error));
    const double unit =
        r.measured_bytes > 0 && std::fmod(r.measured_bytes, 1e7) < 1 ? 1e9 : 1073741824.0;
    const char* unit_name = unit == 1e9 ? "GB" : "GiB";
    out += fmt::format("| {} | {} | {} | {} × {} | {} | {:.2f} {} | {:.2f} {} | {:+.1f}% |\n", r.id,
                       r.model, r.method_text, r.run.batch, r.run.seq,
                       grad_ckpt_name(r.run.grad_ckpt), r.measured_bytes / unit, unit_name,
                       r.estimate_bytes / unit, unit_name, r.error * 100.0);
  }
  std::sort(errors.begin(), errors.end());
  double median = 0;
  if (!errors.empty()) {
    const std::size_t m = errors.size() / 2;
    median = errors.size() % 2 == 1 ? errors[m] : (errors[m - 1] + errors[m]) / 2.0;
  }
  out += fmt::format("\n{} fully specified rows: median absolute error {:.1f}%, largest {:.1f}%.\n",
                     errors.size(), median * 100.0, errors.empty() ? 0.0 : errors.back() * 100.0);
  std::string excluded;
  for (const auto& r : rows) {
    if (r.fully_specified) continue;
    excluded += fmt::format("{}{} ({})", excluded.empty() ? "" : "; ", r.id, r.excluded_reason);
  }
  out += fmt::format("\nNot fully specified (not counted): {}.\n", excluded);
  out +=
      "\nFor reference, the estimate beside the rows not counted (same mapping, ckpt as "
      "parsed):\n\n"
      "| id | model | method | batch × seq | measured | estimate |\n|---|---|---|---|---|---|\n";
  for (const auto& r : rows) {
    if (r.fully_specified || !r.estimated) continue;
    out +=
        fmt::format("| {} | {} | {} | {} × {} | {} | {:.2f} GB |\n", r.id, r.model, r.method_text,
                    r.run.batch, r.run.seq, r.measured_text, r.estimate_bytes / 1e9);
  }
  return out;
}

}  // namespace sparkops::plan::validation

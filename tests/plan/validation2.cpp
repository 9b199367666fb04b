// memory-measured-2.csv: 180 measured peaks from other publications (ms-swift benchmark, Qwen's
// profiling table, LitGPT's config hub, PEFT's FSDP/DeepSpeed guides, Unsloth, GaLore, BAdam).
// Its header names the metric and unit of every row, the framework, loss path, sharding and
// quantization; this maps each row to the plan flags a user would give and says which rows are
// not fully specified, and why.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include <fmt/format.h>

#include "base/text.hpp"
#include "models/catalogue.hpp"
#include "plan/frameworks.hpp"
#include "plan/sharding.hpp"
#include "validation.hpp"

namespace sparkops::plan::validation {

namespace {

std::optional<std::uint64_t> leading_count(std::string_view s) {
  std::string t(trim(s));
  std::size_t n = 0;
  while (n < t.size() && t[n] >= '0' && t[n] <= '9') ++n;
  if (n == 0) return std::nullopt;
  return parse_u64(t.substr(0, n));
}

// LoRA target names of the row's model layout, in the module names the layer programs use.
// Qwen (v1) names its fused qkv c_attn, its SwiGLU w1/w2 and both output maps c_proj; Baichuan
// W_pack; GPT-NeoX/ChatGLM query_key_value: each adapts q, k and v at once.
std::vector<std::string> map_targets(std::string_view text) {
  std::vector<std::string> out;
  auto add = [&](std::initializer_list<const char*> names) {
    for (const char* n : names)
      if (std::find(out.begin(), out.end(), n) == out.end()) out.emplace_back(n);
  };
  std::string list(text);
  if (const auto p = list.find(" ("); p != std::string::npos) list = list.substr(0, p);
  if (const auto p = list.find(" +"); p != std::string::npos) list = list.substr(0, p);
  for (const auto part : split(list, ',')) {
    const std::string t = to_lower(trim(part));
    if (t == "c_attn" || t == "w_pack" || t == "query_key_value")
      add({"q_proj", "k_proj", "v_proj"});
    else if (t == "c_proj")
      add({"o_proj", "down_proj"});
    else if (t == "w1" || t == "w2")
      add({t == "w1" ? "gate_proj" : "up_proj"});
    else if (t == "q" || t == "q_proj")
      add({"q_proj"});
    else if (t == "k" || t == "k_proj")
      add({"k_proj"});
    else if (t == "v" || t == "v_proj")
      add({"v_proj"});
    else if (t == "o" || t == "o_proj" || t == "proj")
      add({"o_proj"});
    else if (t == "gate" || t == "gate_proj")
      add({"gate_proj"});
    else if (t == "up" || t == "up_proj")
      add({"up_proj"});
    else if (t == "down" || t == "down_proj")
      add({"down_proj"});
    else if (t == "mlp")
      add({"gate_proj", "up_proj", "down_proj"});
    else if (!t.empty())
      add({"?"});  // a name no layer program has (lm_head, embeddings): not modelled
  }
  return out;
}

// What the LitGPT config-hub yaml of a multi-GPU row ran with, at the commit the row names:
// config_hub/finetune/{phi-2,stablelm-base-alpha-3b}/full.yaml at 00af8b0d (devices 2,
// global_batch_size 8, micro_batch_size 4 and 1) and llama-2-7b/full.yaml at a509064d (devices 4,
// global 64, micro 4). The tables list 4 GPUs for the first two; 8 / 4 / 4 would leave phi-2
// no accumulation step at all (LitGPT asserts at least one), so the yaml's 2 devices ran.
struct LitgptYaml {
  std::string_view id;
  std::uint64_t devices, accum;
};
const LitgptYaml* litgpt_yaml(std::string_view id) {
  static constexpr LitgptYaml kRows[] = {{"LC09", 2, 1}, {"LC13", 2, 4}, {"LC17", 4, 4}};
  for (const auto& y : kRows)
    if (y.id == id) return &y;
  return nullptr;
}

}  // namespace

std::vector<Row> evaluate_v2(const std::string& csv_text) {
  std::vector<Row> rows;
  const auto lines = split_lines(csv_text);
  if (lines.empty()) return rows;
  const auto header = csv_fields(lines[0]);
  for (std::size_t n = 1; n < lines.size(); ++n) {
    if (trim(lines[n]).empty()) continue;
    const auto f = csv_fields(lines[n]);
    // The file has CRLF line ends: the last header name ("notes") carries the \r, so names
    // compare trimmed.
    auto col = [&](std::string_view name) -> std::string {
      for (std::size_t i = 0; i < header.size() && i < f.size(); ++i)
        if (trim(header[i]) == name) return std::string(trim(f[i]));
      return {};
    };
    Row r;
    r.id = col("id");
    r.model = col("model");
    r.method_text = col("method");
    r.source = col("source");
    const std::string unit = col("peak_unit"), metric = col("metric"), method = col("method"),
                      quant = to_lower(col("quant")), ckpt = to_lower(col("grad_ckpt")),
                      framework = to_lower(col("framework")), targets = col("lora_targets"),
                      sharding = to_lower(col("sharding")), optim = to_lower(col("optimizer"));
    r.measured_text = col("peak_value") + " " + unit;
    const auto peak = parse_double(col("peak_value"));
    const auto hidden = leading_count(col("hidden")), layers = leading_count(col("layers")),
               intermediate = leading_count(col("intermediate")),
               vocab = leading_count(col("vocab")), batch = leading_count(col("micro_batch")),
               seq = leading_count(col("seq_len")), gpus = leading_count(col("num_gpus"));
    const std::string m = to_lower(method);
    auto exclude = [&](std::string why) {
      if (r.excluded_reason.empty()) r.excluded_reason = std::move(why);
    };
    if (!peak || *peak <= 0)
      exclude(fmt::format("peak \"{}\" is not one number", col("peak_value")));
    if (!hidden || !layers || !intermediate || !vocab) exclude("architecture incomplete");
    if (!batch || !seq) exclude("batch or sequence length not stated");
    if (unit != "GB" && unit != "GiB") exclude(fmt::format("unit \"{}\"", unit));
    if (contains(m, "galore") || contains(m, "badam") || contains(m, "lisa"))
      exclude("optimizer family (GaLore/BAdam/LISA) not modelled");
    if (contains(m, "capacity")) exclude("capacity test (the largest context that fits)");
    if (contains(m, "modules_to_save")) exclude("trainable embedding/lm_head (modules_to_save)");
    if (contains(quant, "gptq") || contains(quant, "int8"))
      exclude("GPTQ/int8 base: no storage model for it");
    if (contains(ckpt, "offload")) exclude("offloaded checkpointing: what stays on the device");
    if (contains(sharding, "offload") && !contains(sharding, "no offload") &&
        !contains(sharding, "no cpu offload"))
      exclude("parameter offload to the CPU");
    const bool sharded = contains(sharding, "zero") || contains(sharding, "fsdp");
    if (sharded && gpus.value_or(1) <= 1)
      exclude("ZeRO on one GPU (DeepSpeed's own buffers not modelled)");
    if (metric == "unknown") exclude("metric unknown (allocated, reserved or device?)");

    RunConfig& run = r.run;
    run.method = contains(m, "qlora")     ? Method::qlora
                 : starts_with(m, "lora") ? Method::lora
                                          : Method::full;
    const bool litgpt = contains(framework, "litgpt") || contains(framework, "lit-gpt");
    apply_framework(litgpt ? Framework::litgpt : Framework::hf, run);
    // Several GPUs: the row's wrapper (plan/sharding.cpp) and accumulation.
    std::string shard_flags;
    // The micro-batches per optimizer step the row names (ms-swift's benchmark default
    // --gradient_accumulation_steps 16): .grad lives across them (estimator.cpp).
    if (const auto g = to_lower(col("notes")).find("grad-accum "); g != std::string::npos)
      run.grad_accum = leading_count(to_lower(col("notes")).substr(g + 11)).value_or(1);
    if (sharded && gpus.value_or(1) > 1) {
      run.gpus = *gpus;
      run.shard = contains(sharding, "zero-3") || contains(sharding, "zero3")   ? ShardMode::zero3
                  : contains(sharding, "zero-2") || contains(sharding, "zero2") ? ShardMode::zero2
                                                                                : ShardMode::fsdp;
      const std::string notes = to_lower(col("notes"));
      if (const auto g = notes.find("grad-accum "); g != std::string::npos)
        run.grad_accum = leading_count(notes.substr(g + 11)).value_or(1);
      // LitGPT config-hub rows: devices and accumulation from the row's yaml at its commit
      // (gradient_accumulation_iters = global_batch_size / devices / micro_batch_size).
      if (const auto* y = litgpt_yaml(r.id)) {
        run.gpus = y->devices;
        run.grad_accum = y->accum;
      }
      shard_flags =
          fmt::format(" --gpus {} --shard {}{}", run.gpus, shard_name(run.shard),
                      run.grad_accum > 1 ? fmt::format(" --grad-accum {}", run.grad_accum) : "");
    }
    const std::string prec = to_lower(col("base_precision"));
    run.precision = starts_with(prec, "fp16") ? Precision::fp16
                    : contains(prec, "mixed") ? Precision::mixed
                                              : Precision::bf16;
    // PEFT's guides run examples/sft/train.py, whose create_and_prepare_model loads the base with
    // torch_dtype = the 4-bit quant storage dtype, else torch.float32, under Accelerate's
    // mixed_precision: bf16: an unquantized LoRA there keeps an fp32 base.
    if (contains(r.source, "huggingface/peft docs/source/accelerate") && quant == "none" &&
        run.method == Method::lora)
      run.precision = Precision::mixed;
    // ms-swift's benchmark (numbers from commit 97e4d198b, "Update benchmark 0101", swift
    // 1.6.0.dev0, transformers >= 4.33, < 4.37): get_model_tokenizer_qwen sets torch_dtype = None
    // before from_pretrained for every Qwen-1 load, bitsandbytes included (a later release passes
    // the dtype for bnb), and transformers 4.3x then forces fp16 for a 4-bit load: the embedding,
    // lm_head and norms are fp16 while the Trainer computes under autocast(bfloat16).
    if (contains(r.source, "modelscope/ms-swift") && run.method == Method::qlora &&
        starts_with(r.model, "Qwen/Qwen-"))
      run.qlora_kept_fp16 = true;
    // The adapters of ms-swift 1.x's LoRA runs are bf16: its default tuner_backend 'swift'
    // (swift/llm/utils/argument.py at 97e4d198b) builds peft 0.7's lora.Linear
    // (swift/tuners/lora_layers.py LoraModel._create_new_module), whose LoraLayer.update_layer
    // moves A and B to the base weight's dtype (`self.to(weight.device, dtype=weight.dtype)`;
    // requirements pin peft >= 0.7.1, < 0.8, before autocast_adapter_dtype), and
    // fix_fp16_trainable_bug upcasts fp16 trainables only. A 4-bit base weight is uint8, so the
    // QLoRA rows' adapters keep their fp32 creation dtype (the hf preset's).
    if (contains(r.source, "modelscope/ms-swift") &&
        contains(to_lower(col("framework_version")), "ms-swift 1.") && run.method == Method::lora)
      run.adapter_fp32 = false;
    // Sharded, the wrapper computes in bf16 (FSDP MixedPrecision, DeepSpeed's bf16 engine); on
    // one GPU autocast casts every frozen fp32 weight per call (the estimator's autocast copies).
    // TrainingArguments' optimizer as the row names it: `adamw_torch`, or "HF Trainer default"
    // in a publication of 2024 (every source here predates transformers 4.54), is the foreach
    // implementation; the presets' default is the fused one of transformers >= 4.54.
    if (contains(optim, "adamw_torch") || contains(optim, "trainer default"))
      run.fused_adamw = contains(optim, "fused");
    if (contains(optim, "8bit")) run.optim = Optim::adamw8bit;
    if (contains(optim, "paged")) run.optim = Optim::paged_adamw;
    run.batch = batch.value_or(1);
    run.seq = seq.value_or(1);
    run.cublas_workspace_bytes = cublas_workspace_for(col("hardware"));
    // The card's memory caps the allocator's cache (release_cached_blocks and a retry).
    run.device_reach_bytes = device_total_for(col("hardware")).value_or(0);
    // Packed, or every sample padded to the maximum: one shape. Otherwise (samples truncated to
    // max_length, batches padded to their longest) the lengths vary up to --seq.
    const std::string packing = to_lower(col("packing"));
    run.packed = starts_with(packing, "yes") || contains(packing, "padded to");
    run.grad_ckpt = starts_with(ckpt, "no") ? GradCkpt::none : GradCkpt::full;
    if (!starts_with(ckpt, "no") && !starts_with(ckpt, "yes"))
      exclude(fmt::format("grad_ckpt \"{}\"", col("grad_ckpt")));
    const std::string attn = to_lower(col("attn_impl"));
    run.attn = contains(attn, "eager")  ? Attn::eager
               : contains(attn, "sdpa") ? Attn::sdpa
                                        : Attn::flash;
    // lit-gpt before 50b1974b (2023-10-24, "training: flash attention requires it") expanded k
    // and v only when n_query_groups != 1, so a multi-query model (Falcon-7B) reached SDPA with
    // one k/v head for 71 query heads: neither fused kernel takes unequal heads, and SDPA ran its
    // math fallback (lit_gpt/model.py CausalSelfAttention at the rows' commit 29de2828).
    if (contains(to_lower(col("framework_version")), "29de2828") && trim(col("kv_heads")) == "1" &&
        run.attn == Attn::sdpa)
      run.attn = Attn::math;
    const std::string loss = to_lower(col("loss_impl"));
    if (starts_with(loss, "chunked")) run.loss = LossKind::chunked;
    if (starts_with(loss, "fused")) run.loss = LossKind::fused;
    // The HF loss as the rows' code computed it: ms-swift 1.x pins transformers >= 4.33, < 4.37
    // (requirements/framework.txt at 97e4d198b), whose LlamaForCausalLM (Yi, Llama, Mistral)
    // upcasts and copies the shifted logits, and the remote code those rows and Qwen's own
    // finetune.py load (Qwen-1 modeling_qwen.py, ChatGLM3, Baichuan-2) copies them too.
    if (run.loss == LossKind::hf &&
        ((contains(r.source, "modelscope/ms-swift") &&
          contains(to_lower(col("framework_version")), "ms-swift 1.")) ||
         contains(loss, "qwen v1 remote code")))
      run.loss = LossKind::hf_shifted;
    // The bitsandbytes release decides whether MatMul4Bit keeps its input (<= 0.43.1).
    if (const auto b = to_lower(col("framework_version")).find("bitsandbytes ");
        b != std::string::npos && run.method == Method::qlora) {
      const std::string v = to_lower(col("framework_version")).substr(b + 13);
      const auto minor = leading_count(v.substr(std::min(v.size(), v.find('.') + 1)));
      if (starts_with(v, "0.") && minor) {
        run.bnb_saves_input = *minor < 43;
        // Params4bit.cuda quantizes from .half() up to 0.42 (src/plan/plan_args.cpp).
        run.bnb_quant_fp16 = *minor < 43;
      }
    }
    if (contains(quant, "double")) run.double_quant = DoubleQuant::on;
    if (quant == "bnb.nf4") run.double_quant = DoubleQuant::off;
    if (run.method != Method::full) {
      run.lora_rank = leading_count(col("lora_r")).value_or(8);
      if (const auto p = parse_leading_double(col("lora_dropout"))) run.lora_dropout = p->value;
      const std::string lt = to_lower(targets);
      if (starts_with(lt, "all") || starts_with(lt, "q,k,v,proj,mlp,head")) {
        run.lora_targets = LoraTargets::all_linear;
        // LitGPT lora_head: true (the head a LoRALinear too; RunConfig::lora_head).
        if (contains(lt, "head")) run.lora_head = true;
      } else if (lt.empty()) {
        exclude("LoRA targets not stated");
      } else {
        run.lora_targets = LoraTargets::list;
        run.lora_target_names = map_targets(targets);
        if (std::find(run.lora_target_names.begin(), run.lora_target_names.end(), "?") !=
            run.lora_target_names.end())
          exclude(
              fmt::format("LoRA target list \"{}\" names a module no layer program has", targets));
      }
    }
    // nvidia-smi on a discrete GPU: the process's device memory (reserved + context + NCCL's
    // buffers), not the host side.
    r.metric = metric == "allocated"    ? "allocated"
               : metric == "reserved"   ? "reserved"
               : metric == "nvidia-smi" ? "device"
                                        : "pool";

    const std::string bare = std::string(split(r.model, '/').back());
    if (const auto* e = models::find_in_catalogue(bare)) {
      r.shape.name = e->name;
      r.shape.arch = e->arch;
      r.shape.params = count_params(e->arch);
    } else if (hidden && layers && intermediate && vocab) {
      models::ArchOverrides o;
      o.hidden = hidden;
      o.layers = layers;
      o.intermediate = intermediate;
      o.vocab = vocab;
      o.heads = leading_count(col("heads")).value_or(*hidden / 128);
      o.kv_heads = leading_count(col("kv_heads")).value_or(*o.heads);
      o.tied = col("tied_emb") == "yes";
      const double params_b = parse_double(col("params_B")).value_or(0);
      auto shape =
          models::shape_from_params(static_cast<std::uint64_t>(params_b * 1e9), o, nullptr);
      if (!shape) {
        exclude(shape.error().detail);
      } else {
        r.shape = *shape;
        // Qwen (v1) and Qwen1.5: the Llama layout with q/k/v biases (modeling_qwen.py).
        if (icontains(r.model, "qwen")) r.shape.arch.family = "qwen2";
        // Baichuan-2: the Llama layer under its NormHead (modeling_baichuan.py).
        if (icontains(r.model, "baichuan")) r.shape.arch.family = "baichuan";
        // phi-2, StableLM-Alpha and Falcon run the layer program their config.json names, not
        // the nearest catalogue model's (for phi-2 Gemma-2-2B, whose soft-capping would run eager
        // attention): config_layer_program.
        if (const char* family = config_layer_program(r.model))
          take_layer_program(r.shape, family, params_b);
      }
    }
    if (r.shape.params.total == 0) exclude("model shape unknown");
    if (r.excluded_reason.empty()) {
      if (auto st = validate_run(run, r.shape); !st) exclude(st.error().detail);
    }
    r.flags =
        fmt::format("--method {} --batch {} --seq {} --grad-ckpt {} --attn {} --loss {}{}",
                    method_name(run.method), run.batch, run.seq, grad_ckpt_name(run.grad_ckpt),
                    attn_name(run.attn), loss_name(run.loss), litgpt ? " --framework litgpt" : "");
    if (run.precision != Precision::bf16)
      r.flags += fmt::format(" --precision {}", precision_name(run.precision));
    r.flags += shard_flags;
    if (shard_flags.empty() && run.grad_accum > 1)
      r.flags += fmt::format(" --grad-accum {}", run.grad_accum);
    if (run.qlora_kept_fp16) r.flags += " --kept-fp16";
    if (run.method != Method::full && !run.adapter_fp32 && !litgpt)
      r.flags += " --adapter-dtype model";
    if (run.lora_head) r.flags += " --lora-head";
    if (!run.packed) r.flags += " --lengths varying";
    if (r.shape.params.total > 0 && batch && seq) {
      const Estimate e = estimate(r.shape, run);
      const double allocated = static_cast<double>(e.train_peak_allocated_bytes);
      r.pool_estimate_bytes = static_cast<double>(e.train_peak_pool_bytes);
      auto pick = [&](std::uint64_t reserved, std::uint64_t device, std::uint64_t pool) {
        return r.metric == "allocated"  ? allocated
               : r.metric == "reserved" ? static_cast<double>(reserved)
               : r.metric == "device"   ? static_cast<double>(device)
                                        : static_cast<double>(pool);
      };
      r.estimate_bytes =
          pick(e.train_peak_reserved_bytes, e.train_peak_device_bytes, e.train_peak_pool_bytes);
      r.range_low_bytes =
          pick(e.reserved_low_bytes, e.train_peak_device_low_bytes, e.train_peak_pool_low_bytes);
      r.range_high_bytes =
          pick(e.reserved_high_bytes, e.train_peak_device_high_bytes, e.train_peak_pool_high_bytes);
      r.estimated = true;
      r.measured_bytes = peak.value_or(0) * (unit == "GiB" ? 1073741824.0 : 1e9);
      if (r.measured_bytes > 0) r.error = r.estimate_bytes / r.measured_bytes - 1.0;
      // Arithmetic consistency: what the run must hold before any activation (weights,
      // gradients, optimizer states, as the row states them) above the measured peak.
      const double floor =
          static_cast<double>(e.terms.weights + e.terms.adapter + e.terms.gradients +
                              e.terms.optimizer - std::min(e.paged_bytes, e.terms.optimizer));
      if (r.measured_bytes > 0 && floor > r.measured_bytes)
        exclude(
            fmt::format("inconsistent as recorded: weights + gradients + optimizer states "
                        "alone are {:.1f} GB",
                        floor / 1e9));
    }
    r.fully_specified = r.excluded_reason.empty();
    rows.push_back(std::move(r));
  }
  return rows;
}

std::string markdown_table_v2(const std::vector<Row>& rows) {
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    if (v.empty()) return 0.0;
    const std::size_t m = v.size() / 2;
    return v.size() % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2.0;
  };
  std::vector<std::string> order;
  std::map<std::string, std::vector<const Row*>> by_source;
  for (const auto& r : rows) {
    if (!r.fully_specified) continue;
    if (!by_source.count(r.source)) order.push_back(r.source);
    by_source[r.source].push_back(&r);
  }
  std::string out =
      "| source | rows | median \\|error\\| | worst | metric |\n|---|---|---|---|---|\n";
  std::vector<double> all;
  for (const auto& s : order) {
    std::vector<double> errs;
    const Row* worst = nullptr;
    std::string metrics;
    for (const Row* r : by_source[s]) {
      errs.push_back(std::fabs(r->error));
      all.push_back(std::fabs(r->error));
      if (!worst || std::fabs(r->error) > std::fabs(worst->error)) worst = r;
      if (!contains(metrics, r->metric)) metrics += (metrics.empty() ? "" : ", ") + r->metric;
    }
    out += fmt::format("| {} | {} | {:.1f}% | {:+.1f}% ({}) | {} |\n", s, errs.size(),
                       median(errs) * 100.0, worst->error * 100.0, worst->id, metrics);
  }
  out += fmt::format(
      "\n{} fully specified rows: median absolute error {:.1f}%, largest {:.1f}%.\n\n", all.size(),
      median(all) * 100.0, all.empty() ? 0.0 : *std::max_element(all.begin(), all.end()) * 100.0);
  out +=
      "| id | model | flags | metric | measured | estimate | error | range |\n"
      "|---|---|---|---|---|---|---|---|\n";
  std::size_t ranged = 0, inside = 0;
  for (const auto& r : rows) {
    if (!r.fully_specified) continue;
    std::string range = "-";
    if (r.range_high_bytes > r.range_low_bytes) {
      const bool in =
          r.measured_bytes >= r.range_low_bytes && r.measured_bytes <= r.range_high_bytes;
      ++ranged;
      inside += in ? 1 : 0;
      range = fmt::format("{:.2f}-{:.2f} GB{}", r.range_low_bytes / 1e9, r.range_high_bytes / 1e9,
                          in ? " (inside)" : "");
    }
    out += fmt::format("| {} | {} | `{}` | {} | {} | {:.2f} GB | {:+.1f}% | {} |\n", r.id, r.model,
                       r.flags, r.metric, r.measured_text, r.estimate_bytes / 1e9, r.error * 100.0,
                       range);
  }
  out += fmt::format(
      "\n{} rows carry a range (lengths varying up to --seq: the reserve's rising-shapes bound); "
      "the measured figure lies inside it on {}.\n",
      ranged, inside);
  std::map<std::string, std::vector<std::string>> why;
  for (const auto& r : rows)
    if (!r.fully_specified) why[r.excluded_reason].push_back(r.id);
  out += "\nNot fully specified (not counted), by reason:\n\n";
  for (const auto& [reason, ids] : why)
    out += fmt::format("- {} ({}): {}\n", reason, ids.size(), fmt::join(ids, ", "));
  return out;
}

}  // namespace sparkops::plan::validation

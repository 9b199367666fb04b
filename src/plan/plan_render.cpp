#include "plan/plan_render.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "base/table.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "plan/frameworks.hpp"
#include "plan/sharding.hpp"
#include "plan/transformers_version.hpp"

namespace sparkops::plan {

std::string_view verdict_words(plan::Verdict v) {
  switch (v) {
    case plan::Verdict::fits:
      return "fits";
    case plan::Verdict::fits_after_flush:
      return "fits after flush";
    case plan::Verdict::tight:
      return "tight";
    case plan::Verdict::wont_fit:
      return "won't fit";
  }
  return "won't fit";
}

namespace {

using nlohmann::json;

std::string billions(std::uint64_t n) {
  if (n >= 1'000'000'000) return fmt::format("{:.2f}B", static_cast<double>(n) / 1e9);
  return fmt::format("{:.1f}M", static_cast<double>(n) / 1e6);
}

std::string targets_text(const plan::RunConfig& run) {
  switch (run.lora_targets) {
    case plan::LoraTargets::all_linear:
      return "all-linear";
    case plan::LoraTargets::attn:
      return "attn";
    case plan::LoraTargets::list:
      return fmt::format("{}", fmt::join(run.lora_target_names, ","));
  }
  return "";
}

std::string run_text(const plan::RunConfig& run) {
  std::string s = fmt::format("{} {} {}  batch {} × seq {}  grad-ckpt {}  attn {}",
                              plan::method_name(run.method), plan::precision_name(run.precision),
                              plan::optim_name(run.optim), run.batch, run.seq,
                              plan::grad_ckpt_name(run.grad_ckpt), plan::attn_name(run.attn));
  if (run.method != plan::Method::full)
    s += fmt::format("  r{} {}", run.lora_rank, targets_text(run));
  if (run.kbit_prep == plan::KbitPrep::on) s += "  kbit-prep";
  if (run.qlora_kept_fp16) s += "  kept-fp16";
  if (run.lora_head) s += "  lora-head";
  if (run.compiled) s += "  compiled";
  if (run.optimizer_in_backward) s += "  optimizer-in-bwd";
  if (run.loss != plan::LossKind::hf) s += fmt::format("  loss {}", plan::loss_name(run.loss));
  if (run.method != plan::Method::full && run.lora_dropout > 0)
    s += fmt::format("  lora-dropout {}", run.lora_dropout);
  if (run.method != plan::Method::full && !run.adapter_fp32) s += "  adapters in model dtype";
  if (run.nodes * run.gpus > 1)
    s += fmt::format("  {} × {} GPU {}{}", run.nodes, run.gpus, plan::shard_name(run.shard),
                     run.grad_accum > 1 ? fmt::format(" accum {}", run.grad_accum) : "");
  else if (run.grad_accum > 1)  // gradients live across micro-batches on one GPU too
    s += fmt::format("  accum {}", run.grad_accum);
  if (!run.packed) s += "  lengths varying";
  if (run.expandable_segments) s += "  expandable-segments";
  return s;
}

std::string advice_text(const plan::Advice& a, plan::PeakBasis basis) {
  const auto& r = a.run;
  std::string what;
  switch (a.kind) {
    case plan::AdviceKind::shorter_seq:
      what = fmt::format("packing {} (largest that fits)", r.seq);
      break;
    case plan::AdviceKind::smaller_batch:
      what = fmt::format("batch {}", r.batch);
      break;
    case plan::AdviceKind::method_down:
      what = fmt::format("method {} at packing {}", plan::method_name(r.method), r.seq);
      break;
    case plan::AdviceKind::more_nodes:
      what = fmt::format("--nodes {} --shard {}", r.nodes, plan::shard_name(r.shard));
      break;
  }
  if (basis == plan::PeakBasis::device) {
    // A discrete GPU: the figure held against its memory is the device peak.
    return fmt::format("{:<40} on the GPU {:>9}  {}", what,
                       format_bytes(plan::peak_bytes(a.estimate, basis)),
                       a.fits ? "fits" : "does not fit");
  }
  return fmt::format(
      "{:<40} train {:>9}  load {:>9}  {}", what, format_bytes(a.estimate.train_peak_pool_bytes),
      format_bytes(a.estimate.load_peak_pool_bytes), a.fits ? "fits" : "does not fit");
}

// The transformers release behind an HF-model loss: the user's (--transformers, config
// plan.transformers) or the preset's pin; empty when the loss is not the HF model's own or no
// release is known.
std::string transformers_of(const plan::RunConfig& r) {
  if (!plan::is_hf_model_loss(r.loss)) return {};
  if (!r.transformers.empty()) return r.transformers;
  return std::string(plan::framework_preset(r.framework).transformers);
}

json run_json(const plan::RunConfig& r) {
  json j = {{"method", plan::method_name(r.method)},
            {"precision", plan::precision_name(r.precision)},
            {"optim", plan::optim_name(r.optim)},
            {"batch", r.batch},
            {"seq", r.seq},
            {"grad_ckpt", plan::grad_ckpt_name(r.grad_ckpt)},
            {"attn", plan::attn_name(r.attn)},
            {"nodes", r.nodes},
            {"gpus", r.gpus},
            {"shard", plan::shard_name(r.shard)},
            {"grad_accum", r.grad_accum},
            {"kbit_prep", r.kbit_prep == plan::KbitPrep::on},
            {"chunked_loss", r.loss == plan::LossKind::chunked},
            {"loss", plan::loss_name(r.loss)},
            {"framework", plan::framework_preset(r.framework).name},
            {"lengths", r.packed ? "fixed" : "varying"},
            {"expandable_segments", r.expandable_segments}};
  if (r.method != plan::Method::full) {
    j["lora_rank"] = r.lora_rank;
    j["lora_targets"] = targets_text(r);
  }
  if (r.method == plan::Method::qlora) j["double_quant"] = r.double_quant == plan::DoubleQuant::on;
  if (r.method != plan::Method::full) {
    j["lora_dropout"] = r.lora_dropout;
    j["adapter_dtype"] = r.adapter_fp32 ? "fp32" : "model";
  }
  if (r.method == plan::Method::qlora) j["bnb_saves_input"] = r.bnb_saves_input;
  if (r.qlora_kept_fp16) j["kept_fp16"] = true;
  if (r.lora_head) j["lora_head"] = true;
  if (r.compiled) j["compiled"] = true;
  if (r.optimizer_in_backward) j["optimizer_in_bwd"] = true;
  if (const auto t = transformers_of(r); !t.empty()) j["transformers"] = t;
  return j;
}

json terms_json(const plan::Terms& t) {
  json j = json::object();
  for (const auto& [name, bytes] : plan::term_list(t)) j[std::string(name)] = bytes;
  return j;
}

// "gpu_memory" (a discrete GPU's free memory), "unified_pool" or "flag" (--budget).
std::string_view budget_source_of(const plan::PlanResult& r) {
  if (r.device) return host::budget_source_name(host::BudgetSource::gpu_memory);
  return r.pool ? host::budget_source_name(host::BudgetSource::unified_pool) : "flag";
}

}  // namespace

std::string render_plan_text(const plan::PlanResult& r) {
  const auto& m = r.model;
  const auto& e = r.estimate;
  std::string out;
  out += fmt::format("Model    {} ({}{})  {} params", m.shape.name,
                     models::model_source_name(m.source),
                     m.location.empty() ? "" : ": " + m.location, billions(e.params));
  if (m.shape.params.active != m.shape.params.total) {
    out += fmt::format(", {} active", billions(m.shape.params.active));
  }
  out += fmt::format(", {} trainable\n", billions(e.trainable_params));
  const auto& preset = plan::framework_preset(r.run.framework);
  out += fmt::format("Run      {}\n", run_text(r.run));
  out += fmt::format("Preset   {} [{}]: {}", preset.name, preset.version, preset.summary);
  // Which HF loss program the run assumes, and the release that decides it (or that --loss
  // named another program than the release's).
  if (const auto t = transformers_of(r.run); !t.empty()) {
    const auto v = plan::parse_transformers_version(r.run.transformers);
    const bool overridden = v && plan::hf_loss_for(*v) != r.run.loss;
    out += fmt::format("; HF loss {} (transformers {}{})", plan::loss_name(r.run.loss), t,
                       r.run.transformers.empty() ? ", the preset's"
                       : overridden               ? ", --loss wins"
                                                  : "");
  }
  out += "\n\n";
  out += fmt::format("{:<30}{:>12}  {}\n", "Term", "GiB", "basis");
  for (const auto& [name, bytes] : plan::term_list(e.terms)) {
    out += fmt::format("  {:<28}{:>12}  {}{}\n", name, format_gib(bytes), plan::term_basis(name),
                       name == "page_cache" ? " (reclaimable: not in the peak)" : "");
  }
  out += fmt::format("{:<30}{:>12}  (torch.cuda.max_memory_allocated)\n",
                     "Training peak, allocated", format_gib(e.train_peak_allocated_bytes));
  if (e.reserved_high_bytes > e.reserved_low_bytes) {
    out += fmt::format(
        "{:<30}{:>12}  (max_memory_reserved, caching-allocator replay of rising lengths; "
        "every batch at --seq: {} GiB)\n",
        "Training peak, reserved", format_gib(e.train_peak_reserved_bytes),
        format_gib(e.reserved_low_bytes));
  } else {
    out += fmt::format("{:<30}{:>12}  (max_memory_reserved, caching-allocator replay)\n",
                       "Training peak, reserved", format_gib(e.train_peak_reserved_bytes));
  }
  out += fmt::format(
      "{:<30}{:>12}  (reserved + context{} + host side{}{}; range {}-{} GiB)\n",
      "Training peak, pool", format_gib(e.train_peak_pool_bytes),
      e.terms.nccl_buffers > 0 ? " + NCCL buffers" : "", e.paged_bytes > 0 ? " + paged states" : "",
      e.pinned_host_bytes > 0 ? " + pinned host buffers" : "",
      format_gib(e.train_peak_pool_low_bytes), format_gib(e.train_peak_pool_high_bytes));
  if (r.device) {
    out += fmt::format(
        "{:<30}{:>12}  (training: reserved + context{}{}; the load's device side if larger; "
        "held against the budget)\n",
        "Peak on the GPU", format_gib(plan::peak_bytes(e, r.peak_basis)),
        e.terms.nccl_buffers > 0 ? " + NCCL buffers" : "",
        e.paged_bytes > 0 ? " + paged states" : "");
  }
  out += fmt::format(
      "{:<30}{:>12}  (weights + {} shard{})\n", "Load peak, pool",
      format_gib(e.load_peak_pool_bytes), format_bytes(e.largest_shard_bytes),
      r.run.method == plan::Method::qlora && !m.shape.quant ? " mmap + its bf16 copy" : " mmap");
  if (r.device) {
    out += fmt::format("{:<30}{:>12}  (GPU {} free of {}: a discrete GPU's own memory)\n", "Budget",
                       format_gib(r.budget_bytes), r.device->index,
                       format_bytes(r.device->total_bytes));
  } else if (r.pool) {
    out += fmt::format("{:<30}{:>12}  (available {} - overhead {}; free now {})\n", "Budget",
                       format_gib(r.budget_bytes), format_bytes(r.pool->effective_available_bytes),
                       format_bytes(r.pool->overhead_bytes), format_bytes(r.pool->free_now_bytes));
  } else {
    out += fmt::format("{:<30}{:>12}  (--budget)\n", "Budget", format_gib(r.budget_bytes));
  }
  out += fmt::format("{:<30}{}\n", "Verdict", verdict_words(r.verdict));
  if (r.anchor) out += fmt::format("{:<30}{}\n", "Anchor", r.anchor->message);
  if (!r.advice.empty()) {
    out += "\nDoes not fit. In order (the OOM ladder's order):\n";
    for (std::size_t i = 0; i < r.advice.size(); ++i) {
      out += fmt::format("  {}. {}\n", i + 1, advice_text(r.advice[i], r.peak_basis));
    }
  }
  for (const auto& n : r.notes) out += fmt::format("note: {}\n", n);
  return out;
}

json plan_to_json(const plan::PlanResult& r) {
  const auto& e = r.estimate;
  const auto& m = r.model;
  json j;
  j["model"] = {{"name", m.shape.name},          {"source", models::model_source_name(m.source)},
                {"location", m.location},        {"hidden", m.shape.arch.hidden},
                {"layers", m.shape.arch.layers}, {"vocab", m.shape.arch.vocab}};
  if (m.safetensors_params) j["model"]["safetensors_params"] = *m.safetensors_params;
  if (m.shape.quant) {
    const auto& q = *m.shape.quant;
    j["model"]["quantization"] = {
        {"method", models::quant_method_name(q.method)},
        {"format", q.format},
        {"bits", q.bits},
        {"weight_bytes", q.weight_bytes},
        {"exact", q.exact},
        {"training", q.training == models::QuantTraining::frozen_quantized ? "frozen_quantized"
                                                                           : "dequantized"}};
    if (q.group_size) j["model"]["quantization"]["group_size"] = *q.group_size;
  }
  j["params"] = e.params;
  j["active_params"] = m.shape.params.active;
  j["trainable_params"] = e.trainable_params;
  j["run"] = run_json(r.run);
  j["terms"] = terms_json(e.terms);
  j["train_peak_allocated_bytes"] = e.train_peak_allocated_bytes;
  j["train_peak_reserved_bytes"] = e.train_peak_reserved_bytes;
  j["train_peak_reserved_range_bytes"] = {e.reserved_low_bytes, e.reserved_high_bytes};
  j["train_peak_pool_bytes"] = e.train_peak_pool_bytes;
  j["train_peak_device_bytes"] = e.train_peak_device_bytes;
  j["train_peak_device_range_bytes"] = {e.train_peak_device_low_bytes,
                                        e.train_peak_device_high_bytes};
  j["peak_bytes"] = plan::peak_bytes(e, r.peak_basis);
  j["train_peak_pool_range_bytes"] = {e.train_peak_pool_low_bytes, e.train_peak_pool_high_bytes};
  if (r.framework_range) {
    const auto& fr = *r.framework_range;
    j["framework_range"] = {{"low_bytes", fr.low_bytes},
                            {"high_bytes", fr.high_bytes},
                            {"low", plan::framework_preset(fr.low).name},
                            {"high", plan::framework_preset(fr.high).name}};
  } else {
    j["framework_range"] = nullptr;
  }
  j["term_basis"] = json::object();
  for (const auto& [name, bytes] : plan::term_list(e.terms))
    j["term_basis"][std::string(name)] = plan::term_basis(name);
  if (e.expandable_reserve_bytes > 0)
    j["expandable_segments_reserve_bytes"] = e.expandable_reserve_bytes;
  // What cudaMalloc can reach and what the caching allocator can take of it (docs/estimator.md
  // "The device's capacity"); null when the reach is unknown (--budget without --device-total).
  if (r.run.device_reach_bytes > 0) {
    j["device_capacity"] = {{"reach_bytes", r.run.device_reach_bytes},
                            {"unified", r.run.reach_unified},
                            {"allocator_capacity_bytes", e.allocator_capacity_bytes},
                            {"alloc_retries", e.alloc_retries},
                            {"out_of_memory", e.out_of_memory}};
  } else {
    j["device_capacity"] = nullptr;
  }
  j["load_peak_pool_bytes"] = e.load_peak_pool_bytes;
  j["largest_shard_bytes"] = e.largest_shard_bytes;
  j["budget_bytes"] = r.budget_bytes;
  j["budget_source"] = budget_source_of(r);
  if (r.pool) {
    j["pool"] = {{"total_bytes", r.pool->total_bytes},
                 {"available_bytes", r.pool->effective_available_bytes},
                 {"free_now_bytes", r.pool->free_now_bytes},
                 {"overhead_bytes", r.pool->overhead_bytes}};
  } else {
    j["pool"] = nullptr;
  }
  j["verdict"] = plan::verdict_name(r.verdict);
  if (r.anchor) {
    j["anchor"] = {{"id", r.anchor->anchor.id},
                   {"model", r.anchor->anchor.model},
                   {"method", plan::method_name(r.anchor->anchor.method)},
                   {"source", r.anchor->anchor.source},
                   {"params_ratio", r.anchor->params_ratio},
                   {"far", r.anchor->far},
                   {"message", r.anchor->message}};
    if (r.anchor->anchor.peak_pool_bytes)
      j["anchor"]["peak_pool_bytes"] = *r.anchor->anchor.peak_pool_bytes;
    if (r.anchor->estimate_ratio) j["anchor"]["estimate_ratio"] = *r.anchor->estimate_ratio;
    if (r.anchor->run_ratio) {
      j["anchor"]["run_ratio"] = *r.anchor->run_ratio;
      j["anchor"]["compared_at"] = {{"batch", *r.anchor->compared_batch},
                                    {"seq", *r.anchor->compared_seq}};
    }
  } else {
    j["anchor"] = nullptr;
  }
  j["advice"] = json::array();
  for (const auto& a : r.advice) {
    j["advice"].push_back({{"kind", plan::advice_kind_name(a.kind)},
                           {"run", run_json(a.run)},
                           {"train_peak_pool_bytes", a.estimate.train_peak_pool_bytes},
                           {"load_peak_pool_bytes", a.estimate.load_peak_pool_bytes},
                           {"peak_bytes", plan::peak_bytes(a.estimate, r.peak_basis)},
                           {"fits", a.fits}});
  }
  j["notes"] = r.notes;
  return j;
}

std::string render_matrix_text(const plan::PlanResult& base, const std::vector<MatrixCell>& cells,
                               const std::vector<std::uint64_t>& seqs,
                               const std::vector<std::uint64_t>& batches,
                               std::optional<std::size_t> width) {
  std::string out = fmt::format("Model    {}  {} params\nRun      {}\nBudget   {}\n\n",
                                base.model.shape.name, billions(base.estimate.params),
                                run_text(base.run), format_bytes(base.budget_bytes));
  const auto cell_text = [&](std::uint64_t s, std::uint64_t b) {
    for (const auto& c : cells) {
      if (c.seq == s && c.batch == b) {
        return fmt::format("{} GiB {}", format_gib(plan::peak_bytes(c.estimate, base.peak_basis)),
                           verdict_words(c.verdict));
      }
    }
    return std::string("-");
  };
  // The block of batches [first, first + n) as one table.
  const auto block = [&](std::size_t first, std::size_t n) {
    std::vector<TableColumn> columns{{"seq", Align::right, 0, false, 0}};
    for (std::size_t i = first; i < first + n; ++i)
      columns.push_back({fmt::format("batch {}", batches[i]), Align::right, 0, false, 0});
    Table table(std::move(columns), "", 2);
    for (const auto s : seqs) {
      std::vector<std::string> row{std::to_string(s)};
      for (std::size_t i = first; i < first + n; ++i) row.push_back(cell_text(s, batches[i]));
      table.add_row(std::move(row));
    }
    return table.render(std::nullopt);
  };
  const auto widest = [](const std::string& text) {
    std::size_t w = 0;
    for (const auto line : split_lines(text)) w = std::max(w, display_width(line));
    return w;
  };
  // As many batch columns per block as fit the width (at least one).
  std::size_t per_block = batches.size();
  while (width && per_block > 1 && widest(block(0, per_block)) > *width) --per_block;
  for (std::size_t first = 0; first < batches.size(); first += per_block) {
    if (first > 0) out += "\n";
    out += block(first, std::min(per_block, batches.size() - first));
  }
  out += base.peak_basis == plan::PeakBasis::device
             ? "(peak = max(training, load), the discrete GPU's own memory)\n"
             : "(peak = max(training, load), pool view)\n";
  for (const auto& n : base.notes) out += fmt::format("note: {}\n", n);
  return out;
}

json matrix_to_json(const plan::PlanResult& base, const std::vector<MatrixCell>& cells) {
  json j;
  j["model"] = base.model.shape.name;
  j["params"] = base.estimate.params;
  j["run"] = run_json(base.run);
  j["budget_bytes"] = base.budget_bytes;
  j["budget_source"] = budget_source_of(base);
  j["notes"] = base.notes;  // the assumptions the text's "note:" lines show
  j["cells"] = json::array();
  for (const auto& c : cells) {
    j["cells"].push_back({{"seq", c.seq},
                          {"batch", c.batch},
                          {"train_peak_allocated_bytes", c.estimate.train_peak_allocated_bytes},
                          {"train_peak_pool_bytes", c.estimate.train_peak_pool_bytes},
                          {"load_peak_pool_bytes", c.estimate.load_peak_pool_bytes},
                          {"verdict", plan::verdict_name(c.verdict)}});
  }
  return j;
}

std::string render_catalogue_text(const std::vector<models::CatalogueEntry>& entries,
                                  std::optional<std::size_t> width) {
  Table table({{"name", Align::left, 0, false, 0},
               {"repo", Align::left, 0, true, 16},
               {"params", Align::right, 0, false, 0},
               {"active", Align::right, 2, false, 0},
               {"hidden", Align::right, 4, false, 0},
               {"layers", Align::right, 3, false, 0},
               {"heads/kv", Align::right, 5, false, 0},
               {"vocab", Align::right, 6, false, 0}});
  for (const auto& e : entries) {
    const auto c = plan::count_params(e.arch);
    table.add_row({e.name, e.repo, billions(c.total), billions(c.active),
                   std::to_string(e.arch.hidden), std::to_string(e.arch.layers),
                   fmt::format("{}/{}", e.arch.heads, e.arch.kv_heads),
                   std::to_string(e.arch.vocab)});
  }
  std::string out = table.render(width);
  if (width && !table.left_out().empty()) out += left_out_note(table.left_out(), *width) + "\n";
  return out;
}

json catalogue_to_json(const std::vector<models::CatalogueEntry>& entries) {
  json j = json::array();
  for (const auto& e : entries) {
    const auto c = plan::count_params(e.arch);
    j.push_back({{"name", e.name},
                 {"repo", e.repo},
                 {"params", c.total},
                 {"active_params", c.active},
                 {"hidden", e.arch.hidden},
                 {"layers", e.arch.layers},
                 {"heads", e.arch.heads},
                 {"kv_heads", e.arch.kv_heads},
                 {"head_dim", e.arch.head_dim},
                 {"intermediate", e.arch.intermediate},
                 {"vocab", e.arch.vocab},
                 {"tied_embeddings", e.arch.tied_embeddings},
                 {"experts", e.arch.experts},
                 {"experts_per_token", e.arch.experts_per_token}});
  }
  return j;
}

}  // namespace sparkops::plan

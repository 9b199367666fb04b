#include "plan/reserve_model.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "plan/autograd_sim.hpp"

namespace sparkops::plan {

namespace {

std::uint64_t u64(double v) {
  if (!(v > 0)) return 0;
  if (v >= 1.8e19) return std::uint64_t{1} << 63;
  return static_cast<std::uint64_t>(std::llround(v));
}
double d(std::uint64_t v) {
  return static_cast<double>(v);
}
double sum(const std::vector<std::uint64_t>& v) {
  double t = 0;
  for (const auto x : v) t += d(x);
  return t;
}
// Scales tensor sizes so they add up to `total` (a shape given as a parameter count, FSDP
// shards): the estimator's figure is the reference, the list only splits it into tensors.
void scale_to(std::vector<std::uint64_t>& v, double total) {
  const double have = sum(v);
  if (have <= 0 || total <= 0) return;
  const double f = total / have;
  if (std::fabs(f - 1.0) < 1e-3) return;
  for (auto& x : v) x = std::max<std::uint64_t>(1, u64(d(x) * f));
}

StepShape step_shape(const SimResult& sim, const models::Architecture& a, const RunConfig& run,
                     std::uint64_t tokens) {
  StepShape s;
  const double T = d(tokens);
  const double db = run.precision == Precision::fp32 ? 4.0 : 2.0;
  s.hidden = d(a.hidden) * db * T;
  s.inputs = sim.inputs;
  s.rope = sim.rope;
  s.layer = sim.layer_blocks;
  s.layer_backward_peak = sim.layer_backward_peak;
  s.layer_saves_input = sim.layer_saves_input;
  s.final_saved = sim.final_saved;
  // The head's weight copy is one tensor of the same size at every length, apart from the
  // per-token loss tensors.
  s.head_copy = sim.head_copy;
  s.loss_saved = std::max(0.0, sim.loss - sim.head_copy);
  s.loss_forward = sim.loss_forward_transient;
  s.loss_backward = sim.loss_backward_transient;
  s.loss_forward_blocks = sim.loss_forward_blocks;
  s.loss_backward_blocks = sim.loss_backward_blocks;
  s.loss_saved_freed_after = sim.loss_saved_freed_after;
  s.leaf_grad = sim.leaf_grad;
  return s;
}

// Everything the replay reads, as text: the memo's key.
std::string replay_key(const ModelShape& shape, const RunConfig& run, const Terms& t,
                       std::uint64_t paged, double grad_share, std::uint64_t capacity) {
  const models::Architecture& a = shape.arch;
  // The step's simulation (every SimRun field), the model's shape, and what the replay itself
  // reads beyond it: the static terms, paged states, packing, the allocator's settings.
  std::string k = fmt::format(
      "{}|{} {} {} {} {} {} {} {} {} {} {}|{} {} {}|{}|{} {} {} {} {} {} {} {} {}|{} {} {}|{} "
      "{}|{}",
      a.family, a.hidden, a.layers, a.heads, a.kv_heads, a.head_dim, a.intermediate, a.vocab,
      a.experts, a.experts_per_token, a.tied_embeddings, a.needs_eager_attention,
      shape.params.embedding, shape.params.lm_head, shape.params.other,
      sim_run_key(sim_run_for(a, run)), static_cast<int>(run.optim), t.weights, t.adapter,
      t.gradients, t.optimizer, t.master, paged, run.packed, run.expandable_segments,
      run.cublas_workspace_bytes, static_cast<int>(run.kbit_prep),
      static_cast<int>(run.double_quant), run.fused_adamw, grad_share, capacity);
  return k;
}

}  // namespace

// Memoized: the advice ladder and the fit matrix re-plan the same run many times, and a
// long-running caller plans the same shapes again; bounded like the activation model's cache.
namespace {
std::mutex memo_mu;
std::map<std::string, ReserveFigures> memo;
}  // namespace

void clear_replay_cache() {
  std::lock_guard<std::mutex> lock(memo_mu);
  memo.clear();
}

ReserveFigures replay_reserve(const ModelShape& shape, const RunConfig& run, const Terms& terms,
                              std::uint64_t paged_bytes, double grad_share,
                              std::uint64_t capacity) {
  auto& mu = memo_mu;
  auto& cache = memo;
  const std::string key = replay_key(shape, run, terms, paged_bytes, grad_share, capacity);
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  ReserveFigures f = replay_reserve_uncached(shape, run, terms, paged_bytes, grad_share, capacity);
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() > 512) cache.clear();
  cache.emplace(key, f);
  return f;
}

std::uint64_t LibraryBuffers::total() const {
  std::uint64_t t = 0;
  for (const auto b : forward) t += b;
  for (const auto b : backward) t += b;
  return t;
}

LibraryBuffers library_buffers(const models::Architecture& a, const RunConfig& run,
                               const SimRun& sim) {
  LibraryBuffers out;
  if (run.cublas_workspace_bytes > 0) {
    out.forward = {run.cublas_workspace_bytes};
    out.backward = {run.cublas_workspace_bytes};
  }
  out.forward.push_back(kCublasLtWorkspaceBytes);
  if (const double unsloth = unsloth_buffer_bytes(a, sim, a.max_context); unsloth > 0)
    out.forward.push_back(u64(unsloth));
  return out;
}

ReplayInputs replay_inputs(const ModelShape& shape, const RunConfig& run, const Terms& terms,
                           std::uint64_t paged_bytes, double grad_share, std::uint64_t capacity) {
  const models::Architecture& a = shape.arch;
  const ParamCounts& p = shape.params;
  const bool peft = run.method != Method::full;
  const double db = run.precision == Precision::fp32 ? 4.0 : 2.0;
  const double nf4 =
      run.double_quant == DoubleQuant::on ? 0.5 + 1.0 / 64 + 4.0 / (64 * 256) : 0.5 + 4.0 / 64;
  const double ab = peft ? (run.adapter_fp32 ? 4.0 : db) : db;
  const std::uint64_t L = std::max<std::uint64_t>(a.layers, 1);

  ReplayModel m;
  m.layers = L;
  m.checkpointing = run.grad_ckpt != GradCkpt::none;
  // Offloaded layer inputs (RunConfig::offload_kind): torchtune's OffloadActivations keeps the
  // five latest (max_fwd_stash_size) and brings each back into a new tensor; Unsloth frees each
  // once the next layer has it, brings them back into its two persistent buffers and, from the
  // second step, keeps the last layer's (LAST_GC_INDEX).
  if (offloads_layer_inputs(a, run)) {
    if (run.offload_kind == OffloadKind::torchtune) {
      m.offload_stash = 5;
    } else {
      m.offload_stash = 1;
      m.offload_buffers = 2;
      m.offload_keeps_last = true;
    }
  }
  // Parameters as modules build them: per layer each linear map (per expert), two norms; then the
  // embedding, the final norm and an untied lm_head. QLoRA: the packed 4-bit weight and its
  // absmax (bitsandbytes Params4bit: uint8 data, block-64 absmax) as two tensors.
  std::vector<std::uint64_t> linear, other, layer_trainable;
  std::vector<ReplayModel::LoadSource> sources;  // parallel to `linear`
  const auto maps = layer_linears(a);
  for (std::uint64_t l = 0; l < L; ++l) {
    for (const auto& lm : maps) {
      const double n = d(lm.d_in) * d(lm.d_out);
      for (std::uint64_t c = 0; c < lm.copies; ++c) {
        if (run.method == Method::qlora) {
          // Params4bit.cuda (bitsandbytes nn/modules.py): w = data.contiguous().half().cuda(),
          // then quantize_4bit(w) allocates the packed data and absmax; w dies when data is
          // replaced (transformers' loader moves each weight with Params4bit(...).to(device)).
          sources.push_back({u64(n * 2), 2});
          sources.push_back({});
          linear.push_back(u64(n * 0.5));
          linear.push_back(u64(n * (nf4 - 0.5)));
        } else {
          linear.push_back(u64(n * db));
        }
        if (l == 0 && !peft) layer_trainable.push_back(u64(n * db));
      }
    }
    const double norm_bytes = d(a.hidden) * (run.kbit_prep == KbitPrep::on ? 4.0 : db);
    other.push_back(u64(norm_bytes));
    other.push_back(u64(norm_bytes));
    if (l == 0 && !peft) {
      layer_trainable.push_back(u64(d(a.hidden) * db));
      layer_trainable.push_back(u64(d(a.hidden) * db));
    }
  }
  const double kept = run.method == Method::qlora && run.kbit_prep == KbitPrep::on ? 4.0 : db;
  const std::uint64_t embedding = u64(d(p.embedding) * kept);
  const std::uint64_t head = u64(d(p.lm_head) * kept);
  // The 16-bit remainder (embedding, head, norms) and the quantized linears each add up to the
  // estimator's weights term.
  const double head_total = d(embedding) + d(head) + sum(other);
  scale_to(linear, std::max(0.0, d(terms.weights) - head_total));
  m.params = linear;
  if (run.method == Method::qlora) m.load_sources = sources;
  m.params.insert(m.params.end(), other.begin(), other.end());
  if (embedding) m.params.push_back(embedding);
  if (head) m.params.push_back(head);
  m.params.push_back(u64(d(a.hidden) * db));  // final norm

  // Trainable tensors: LoRA A (r x d_in) and B (d_out x r) per targeted map; for a full
  // fine-tune every parameter. Gradients and optimizer states follow them tensor by tensor.
  std::vector<std::uint64_t> layer_adapters;
  if (peft) {
    for (const auto& lm : maps) {
      if (!is_lora_target(lm, run)) continue;
      for (std::uint64_t c = 0; c < lm.copies; ++c) {
        layer_adapters.push_back(u64(d(run.lora_rank) * d(lm.d_in) * ab));
        layer_adapters.push_back(u64(d(run.lora_rank) * d(lm.d_out) * ab));
      }
    }
    for (std::uint64_t l = 0; l < L; ++l)
      m.adapters.insert(m.adapters.end(), layer_adapters.begin(), layer_adapters.end());
    // LoRA on the lm_head: its A (r x h) and B (V x r), their gradients at the loss backward.
    std::vector<std::uint64_t> head_adapters;
    if (run.lora_head) {
      head_adapters.push_back(u64(d(run.lora_rank) * d(a.hidden) * ab));
      head_adapters.push_back(u64(d(run.lora_rank) * d(a.vocab) * ab));
      m.adapters.insert(m.adapters.end(), head_adapters.begin(), head_adapters.end());
    }
    scale_to(m.adapters, d(terms.adapter));
    m.layer_grads = layer_adapters;
    m.head_grads = head_adapters;
    const double head_share = sum(head_adapters);
    scale_to(m.layer_grads,
             (d(terms.gradients) * (1.0 - head_share / std::max(1.0, d(terms.adapter)))) / d(L));
  } else {
    m.layer_grads = layer_trainable;
    const double nonlayer = d(terms.gradients) - d(L) * sum(layer_trainable);
    if (head) m.head_grads.push_back(head);
    m.head_grads.push_back(u64(d(a.hidden) * db));
    if (embedding) m.stem_grads.push_back(embedding);
    const double listed = sum(m.head_grads) + sum(m.stem_grads);
    if (nonlayer > 0 && listed > 0) {
      scale_to(m.head_grads, nonlayer * sum(m.head_grads) / listed);
      scale_to(m.stem_grads, nonlayer * sum(m.stem_grads) / listed);
    }
  }
  // Every gradient tensor of the step, for the states and the foreach temporaries.
  std::vector<std::uint64_t> all_grads;
  for (std::uint64_t l = 0; l < L; ++l)
    all_grads.insert(all_grads.end(), m.layer_grads.begin(), m.layer_grads.end());
  all_grads.insert(all_grads.end(), m.head_grads.begin(), m.head_grads.end());
  all_grads.insert(all_grads.end(), m.stem_grads.begin(), m.stem_grads.end());
  const double grad_total = sum(all_grads);
  // Optimizer states inside torch's allocator (paged bitsandbytes states are not): two tensors
  // per parameter for the Adam family (exp_avg, exp_avg_sq: zeros_like), one for the others;
  // the fp32 master copy of mixed precision likewise per parameter.
  const double in_allocator = d(terms.optimizer) - std::min(d(terms.optimizer), d(paged_bytes));
  const bool two_states = run.optim == Optim::adamw || run.optim == Optim::adamw8bit ||
                          run.optim == Optim::paged_adamw || run.optim == Optim::paged_adamw8bit;
  if (in_allocator > 0 && grad_total > 0) {
    const double per = in_allocator / grad_total / (two_states ? 2.0 : 1.0);
    for (const auto g : all_grads)
      for (int k = 0; k < (two_states ? 2 : 1); ++k) m.states.push_back(u64(d(g) * per));
  }
  if (terms.master > 0 && grad_total > 0)
    for (const auto g : all_grads) m.states.push_back(u64(d(g) * d(terms.master) / grad_total));
  // torch/optim/adamw.py _multi_tensor_adamw: torch._foreach_sqrt(exp_avg_sqs) is one tensor per
  // parameter, alive through the step; fused AdamW and the other optimizers allocate none here.
  if (run.optim == Optim::adamw && !run.fused_adamw) m.step_temps = all_grads;
  m.step_in_backward = run.optimizer_in_backward && !peft;
  if (m.step_in_backward) m.step_temps.clear();  // one parameter's, inside its layer's working set
  SimRun base = sim_run_for(a, run);
  LibraryBuffers libs = library_buffers(a, run, base);
  m.forward_workspaces = std::move(libs.forward);
  m.backward_workspaces = std::move(libs.backward);
  base.grad_share = grad_share;
  m.dequant_copies = base.dequant_copies;
  auto shape_at = [&](std::uint64_t seq) -> StepShape {
    SimRun sr = base;
    sr.seq = seq;
    auto sim = simulate_step(a, sr);
    if (!sim) return {};
    return step_shape(*sim, a, run, run.batch * seq);
  };

  ReplayInputs in;
  in.config.expandable_segments = run.expandable_segments;
  in.config.capacity = capacity;
  m.min_layer_block = kSmallSize;
  in.model = std::move(m);
  const StepShape full = shape_at(run.seq);
  in.fixed = {full, full};
  if (!run.packed && run.seq >= kVaryingShapes) {
    for (unsigned k = 1; k <= kVaryingShapes; ++k)
      in.varying.push_back(k == kVaryingShapes ? full : shape_at(run.seq * k / kVaryingShapes));
  }
  return in;
}

ReserveFigures replay_reserve_uncached(const ModelShape& shape, const RunConfig& run,
                                       const Terms& terms, std::uint64_t paged_bytes,
                                       double grad_share, std::uint64_t capacity) {
  const ReplayInputs in = replay_inputs(shape, run, terms, paged_bytes, grad_share, capacity);
  auto replay = [&](const std::vector<StepShape>& steps) {
    return replay_training(in.model, steps, in.config);
  };
  ReserveFigures out;
  out.workspaces =
      LibraryBuffers{in.model.forward_workspaces, in.model.backward_workspaces}.total();
  const ReplayResult fixed = replay(in.fixed);
  out.fixed_replay = fixed;
  out.fixed = fixed.peak_reserved - std::min(fixed.peak_reserved, fixed.peak_requested);
  out.varying = out.fixed;
  out.varying_replay = out.fixed_replay;
  if (!in.varying.empty()) {
    const ReplayResult varying = replay(in.varying);
    out.varying_replay = varying;
    // Above what the longest step asks for: the rise leaves the shorter steps' segments cached.
    out.varying = varying.peak_reserved - std::min(varying.peak_reserved, fixed.peak_requested);
    out.varying = std::max(out.varying, out.fixed);
  }
  return out;
}

}  // namespace sparkops::plan

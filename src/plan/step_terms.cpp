#include "plan/step_terms.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace sparkops::plan {

Result<StepTerms> step_terms(const models::Architecture& a, const SimRun& run, OptimStep optim,
                             bool double_quant) {
  auto pb = param_bytes(a, run, double_quant, run.seq);
  if (!pb) return tl::unexpected(pb.error());
  auto sim = simulate_step(a, run);
  if (!sim) return tl::unexpected(sim.error());
  StepTerms t;
  t.weights = pb->base;
  t.adapter = pb->adapter;
  t.gradients = pb->trainable;
  t.optimizer = optim == OptimStep::sgd ? 0 : 2 * pb->trainable;
  t.buffers = unsloth_buffer_bytes(a, run, a.max_context);
  t.inputs = sim->inputs;
  t.activations = sim->activations;
  t.loss = sim->loss;
  const double fixed = t.weights + t.adapter + t.optimizer + t.buffers;
  // Accumulating micro-batches: every .grad lives through the forward and the backward
  // (estimator.cpp, `accumulated`).
  const double accumulated = run.grads_accumulated ? t.gradients : 0;
  t.forward_peak = fixed + accumulated + t.inputs + sim->forward_peak_extra;
  t.backward_peak = fixed + accumulated + t.inputs + sim->backward_peak_extra;
  const double temp = optim == OptimStep::adamw_foreach ? pb->trainable : 0;
  t.optimizer_peak = fixed + t.gradients + temp;
  t.peak = std::max({t.forward_peak, t.backward_peak, t.optimizer_peak});
  return t;
}

namespace {
template <class E>
Result<E> pick(const nlohmann::json& c, const char* key, const char* dflt,
               std::initializer_list<std::pair<const char*, E>> table) {
  const std::string v = c.value(key, std::string(dflt));
  for (const auto& [name, e] : table)
    if (v == name) return e;
  return fail(Errc::invalid_argument, fmt::format("config: {} \"{}\" unknown", key, v));
}
}  // namespace

Result<nlohmann::json> step_terms_from_json(const nlohmann::json& c) {
  try {
    models::Architecture a;
    a.family = c.at("family").get<std::string>();
    a.hidden = c.at("hidden").get<std::uint64_t>();
    a.layers = c.at("layers").get<std::uint64_t>();
    a.heads = c.at("heads").get<std::uint64_t>();
    a.kv_heads = c.at("kv_heads").get<std::uint64_t>();
    a.head_dim = c.at("head_dim").get<std::uint64_t>();
    a.intermediate = c.at("intermediate").get<std::uint64_t>();
    a.vocab = c.at("vocab").get<std::uint64_t>();
    a.tied_embeddings = c.value("tied", false);
    a.max_context = c.value("max_position", c.at("seq").get<std::uint64_t>());
    SimRun r;
    auto m = pick<TrainMethod>(
        c, "method", "full",
        {{"full", TrainMethod::full}, {"lora", TrainMethod::lora}, {"qlora", TrainMethod::qlora}});
    auto at = pick<AttnKernel>(c, "attn", "sdpa",
                               {{"sdpa", AttnKernel::sdpa},
                                {"flash", AttnKernel::flash},
                                {"eager", AttnKernel::eager},
                                {"math", AttnKernel::math},
                                {"xformers", AttnKernel::xformers}});
    auto lp = pick<LossPath>(c, "loss", "hf",
                             {{"hf", LossPath::hf},
                              {"hf_shifted", LossPath::hf_shifted},
                              {"hf_shifted_kept", LossPath::hf_shifted_kept},
                              {"chunked", LossPath::chunked},
                              {"fused", LossPath::fused},
                              {"chunked_output", LossPath::chunked_output},
                              {"chunked_nll", LossPath::chunked_nll},
                              {"megatron", LossPath::megatron}});
    auto op = pick<OptimStep>(c, "optim", "adamw_foreach",
                              {{"adamw_foreach", OptimStep::adamw_foreach},
                               {"adamw_fused", OptimStep::adamw_fused},
                               {"sgd", OptimStep::sgd}});
    for (const Error* e : {m ? nullptr : &m.error(), at ? nullptr : &at.error(),
                           lp ? nullptr : &lp.error(), op ? nullptr : &op.error()})
      if (e) return tl::unexpected(*e);
    r.method = *m;
    r.attn = *at;
    r.loss = *lp;
    r.batch = c.at("batch").get<std::uint64_t>();
    r.seq = c.at("seq").get<std::uint64_t>();
    r.model_bytes = c.value("precision", std::string("bf16")) == "fp32" ? 4 : 2;
    r.adapter_bytes = c.value("adapter_dtype", std::string("fp32")) == "fp32" ? 4 : r.model_bytes;
    r.lora_rank = c.value("lora_rank", std::uint64_t{16});
    r.lora_dropout = c.value("lora_dropout", 0.0);
    r.targets = c.value("lora_targets", std::vector<std::string>{});
    r.all_linear = false;
    r.ckpt = c.value("grad_ckpt", std::string("none")) == "none" ? Checkpointing::none
                                                                 : Checkpointing::per_layer;
    r.bnb_saves_input = c.value("bnb_saves_input", false);
    r.dropout_off = c.value("dropout_off", false);
    // LitGPT's loop and Fabric's 4-bit plugin (tools/memtrace/memtrace/litgpt.py measures them).
    r.prev_graph_held = c.value("prev_graph_held", false);
    r.outputs_fp32 = c.value("outputs_fp32", false);
    r.whole_head = c.value("whole_head", false);
    r.grads_accumulated = c.value("grad_accum", 1u) > 1;
    r.dequant_copies = c.value("dequant_copies", 1u);
    r.head_4bit = c.value("head_4bit", false);
    r.fused_qkv_lora = c.value("fused_qkv_lora", false);
    r.megatron_layer = c.value("megatron_layer", false);
    r.unsloth_layer = c.value("unsloth_layer", false);
    r.nll_chunk = c.value("nll_chunk", std::uint64_t{256});
    auto t = step_terms(a, r, *op, c.value("double_quant", true));
    if (!t) return tl::unexpected(t.error());
    return nlohmann::json{{"weights", t->weights},
                          {"adapter", t->adapter},
                          {"optimizer", t->optimizer},
                          {"gradients", t->gradients},
                          {"buffers", t->buffers},
                          {"inputs", t->inputs},
                          {"activations", t->activations},
                          {"loss", t->loss},
                          {"peak", t->peak},
                          {"phase_peaks",
                           {{"forward", t->forward_peak},
                            {"backward", t->backward_peak},
                            {"optimizer", t->optimizer_peak}}}};
  } catch (const nlohmann::json::exception& e) {
    return fail(Errc::invalid_argument, fmt::format("config: {}", e.what()));
  }
}

}  // namespace sparkops::plan

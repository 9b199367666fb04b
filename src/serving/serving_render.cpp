#include "serving/serving_render.hpp"

#include <fmt/format.h>

#include "base/units.hpp"
#include "plan/plan_render.hpp"

namespace sparkops::serving {

namespace {

std::string tokens_text(double v) {
  return fmt::format("{:.1f}", v);
}

}  // namespace

std::string render_serving_text(const serving::ServingPlan& p) {
  const auto& a = p.args;
  std::string out =
      fmt::format("serve {} with {}\n", p.model_name, serving::serve_engine_title(a.engine));
  out += fmt::format("  {:<16} {:>10}  {}\n", "weights", format_bytes(p.weights_bytes),
                     p.weights_text);
  for (const auto& t : p.terms) {
    if (t.name == "weights") continue;
    out += fmt::format("  {:<16} {:>10}  {}\n", t.name, format_bytes(t.bytes), t.source);
  }
  const auto& k = p.kv;
  std::string layout = k.mla
                           ? fmt::format("MLA latent, {} layers", k.full_layers + k.sliding_layers)
                           : fmt::format("{} layers", k.full_layers + k.sliding_layers);
  if (k.sliding_layers > 0) {
    layout +=
        fmt::format("; {} sliding-window layers keep {} tokens, so {} B/token past the window",
                    k.sliding_layers, k.window, tokens_text(p.kv_bytes_beyond_window));
  }
  out += fmt::format("KV cache per token: {} B ({}; {} {})\n", tokens_text(p.kv_bytes_per_token),
                     layout, a.kv_dtype.name, a.kv_dtype_given ? "as asked" : "(default)");
  if (a.engine == ServeEngine::llama_cpp || a.engine == ServeEngine::ollama) {
    out += fmt::format("holds: {} tokens of KV ({} slot{} x {} tokens)\n", p.tokens_held,
                       a.parallel, a.parallel == 1 ? "" : "s", p.context);
  } else {
    out += fmt::format(
        "holds: {} sequences of {} tokens at once ({} tokens){}\n", tokens_text(p.concurrency),
        p.context, p.tokens_held,
        a.parallel > 0 ? fmt::format("; at most {} running", a.parallel) : std::string());
  }
  if (p.kv_shortfall_bytes > 0) {
    out += fmt::format(
        "refusal: one {}-token sequence needs {} more KV than its cache holds: the engine will "
        "not start\n",
        p.context, format_bytes(static_cast<std::uint64_t>(p.kv_shortfall_bytes)));
  }
  out += fmt::format("claims: {}\n", p.claim_text);
  out += fmt::format("footprint {} {}; up to {} while loading\n", format_bytes(p.footprint_bytes),
                     p.on_card ? "on the GPU" : "in the pool", format_bytes(p.startup_peak_bytes));
  out +=
      fmt::format("budget {}: {}\n", format_bytes(p.budget_bytes), plan::verdict_words(p.verdict));
  if (p.largest_context) {
    const std::string_view flag = a.engine == ServeEngine::vllm     ? "--max-model-len"
                                  : a.engine == ServeEngine::sglang ? "--context-length"
                                  : a.engine == ServeEngine::trtllm ? "--max_seq_len"
                                  : a.engine == ServeEngine::ollama ? "num_ctx"
                                                                    : "-c";
    out += p.largest_context_at
               ? fmt::format("largest {} that fits: {} (at {} {:.2f})\n", flag, *p.largest_context,
                             a.engine == ServeEngine::vllm ? "--gpu-memory-utilization"
                                                           : "--mem-fraction-static",
                             *p.largest_context_at)
               : fmt::format("largest {} that fits: {}\n", flag, *p.largest_context);
  }
  if (p.largest_parallel)
    out += fmt::format("largest OLLAMA_NUM_PARALLEL at this num_ctx: {}\n", *p.largest_parallel);
  if (p.largest_fraction) {
    out += fmt::format(
        "largest {} the budget allows: {:.2f}\n",
        a.engine == ServeEngine::vllm ? "--gpu-memory-utilization" : "--mem-fraction-static",
        *p.largest_fraction);
  }
  for (const auto& n : p.notes) out += fmt::format("note: {}\n", n);
  return out;
}

nlohmann::json serving_to_json(const serving::ServingPlan& p) {
  const auto& a = p.args;
  nlohmann::json j;
  j["mode"] = "serve";
  j["model"] = p.model_name;
  j["engine"] = std::string(serving::serve_engine_name(a.engine));
  j["weights_bytes"] = p.weights_bytes;
  j["weights"] = p.weights_text;
  nlohmann::json terms = nlohmann::json::array();
  for (const auto& t : p.terms)
    terms.push_back({{"name", t.name}, {"bytes", t.bytes}, {"source", t.source}});
  j["terms"] = terms;
  j["kv"] = {{"dtype", a.kv_dtype.name},
             {"bytes_per_value", a.kv_dtype.bytes_per_value},
             {"bytes_per_token", p.kv_bytes_per_token},
             {"bytes_per_token_beyond_window", p.kv_bytes_beyond_window},
             {"layers", p.kv.full_layers + p.kv.sliding_layers},
             {"sliding_layers", p.kv.sliding_layers},
             {"window", p.kv.window},
             {"mla", p.kv.mla},
             {"cache_bytes", p.kv_cache_bytes},
             {"shortfall_bytes", p.kv_shortfall_bytes}};
  j["context"] = p.context;
  j["parallel"] = a.parallel;
  j["concurrency"] = p.concurrency;
  j["tokens_held"] = p.tokens_held;
  j["claim"] = {{"kind", std::string(serving::claim_kind_name(p.claim))}, {"text", p.claim_text}};
  if (p.claim_bytes) j["claim"]["bytes"] = *p.claim_bytes;
  if (a.fraction) j["claim"]["fraction"] = *a.fraction;
  j["footprint_bytes"] = p.footprint_bytes;
  j["startup_peak_bytes"] = p.startup_peak_bytes;
  j["device_total_bytes"] = p.device_total_bytes;
  j["budget_bytes"] = p.budget_bytes;
  j["verdict"] = std::string(plan::verdict_name(p.verdict));
  if (p.largest_context) j["largest_context"] = *p.largest_context;
  if (p.largest_context_at) j["largest_context_fraction"] = *p.largest_context_at;
  if (p.largest_parallel) j["largest_parallel"] = *p.largest_parallel;
  if (p.largest_fraction) j["largest_fraction"] = *p.largest_fraction;
  j["notes"] = p.notes;
  return j;
}

std::string render_beside_text(const serving::BesideVerdict& v,
                               const std::vector<serving::PlannedJob>& jobs) {
  std::string out = "beside:\n";
  for (const auto& j : jobs) {
    const auto& w = j.workload;
    out += fmt::format("  {} — {} ({}), reserves {}, sized by {}{}\n", j.command, w.kind.label,
                       w.cap.text, format_bytes(w.reserved_bytes()), j.sizing,
                       w.heavy ? ", heavy" : "");
  }
  out += fmt::format("verdict: {}\n", v.summary);
  for (const auto& s : v.verdict.stop) {
    out += fmt::format("  stop first: {} ({}), frees {}\n",
                       s.pid == 0 ? std::string("the planned ") + s.label
                                  : fmt::format("PID {} {}", s.pid, s.label),
                       s.reason, format_bytes(s.frees_bytes));
  }
  for (const auto& c : v.cap_first) {
    out += c.flag.empty() ? fmt::format("  cap {}: {}\n", c.label, c.why)
                          : fmt::format("  or cap {} with {}: {}\n", c.label, c.flag, c.why);
  }
  return out;
}

nlohmann::json beside_to_json(const serving::BesideVerdict& v,
                              const std::vector<serving::PlannedJob>& jobs) {
  nlohmann::json j;
  j["verdict"] = std::string(workloads::verdict_kind_name(v.verdict.kind));
  // The space judged, as procs and status give it: the unified pool or a discrete GPU's memory.
  j["source"] = std::string(host::budget_source_name(v.verdict.source));
  j["gpu_index"] = v.verdict.gpu_index ? nlohmann::json(*v.verdict.gpu_index) : nlohmann::json();
  j["summary"] = v.summary;
  j["need_bytes"] = v.verdict.need_bytes;
  j["room_bytes"] = v.verdict.room_bytes;
  j["reserved_bytes"] = v.verdict.reserved_bytes;
  j["heavy"] = v.heavy;
  nlohmann::json planned = nlohmann::json::array();
  for (const auto& p : jobs) {
    planned.push_back({{"command", p.command},
                       {"engine", std::string(workloads::engine_name(p.workload.kind.engine))},
                       {"cap", p.workload.cap.text},
                       {"cap_state", std::string(workloads::cap_state_name(p.workload.cap.state))},
                       {"reserved_bytes", p.workload.reserved_bytes()},
                       {"heavy", p.workload.heavy},
                       {"sized_by", p.sizing}});
  }
  j["planned"] = planned;
  nlohmann::json stop = nlohmann::json::array();
  for (const auto& s : v.verdict.stop)
    stop.push_back(
        {{"pid", s.pid}, {"label", s.label}, {"reason", s.reason}, {"frees_bytes", s.frees_bytes}});
  j["stop_first"] = stop;
  nlohmann::json caps = nlohmann::json::array();
  for (const auto& c : v.cap_first)
    caps.push_back({{"workload", c.label}, {"flag", c.flag}, {"why", c.why}});
  j["cap_first"] = caps;
  return j;
}

}  // namespace sparkops::serving

#include "cli/serve_plan.hpp"

#include <cmath>

#include <fmt/format.h>

#include "base/text.hpp"
#include "base/units.hpp"
#include "config/config.hpp"

namespace sparkops::cli {

namespace {

using serving::ServeEngine;

std::string tokens_text(double v) {
  return fmt::format("{:.1f}", v);
}

// Which engine a --beside command runs, from the same classifier procs uses.
std::optional<ServeEngine> serve_engine_of(const Workload& w) {
  if (w.kind.role != Role::server && w.kind.role != Role::engine) return std::nullopt;
  switch (w.kind.engine) {
    case Engine::vllm:
      return ServeEngine::vllm;
    case Engine::sglang:
      return ServeEngine::sglang;
    case Engine::ollama:
      return ServeEngine::ollama;
    case Engine::llama_cpp:
      return ServeEngine::llama_cpp;
    case Engine::tensorrt_llm:
      return ServeEngine::trtllm;
    default:
      return std::nullopt;
  }
}

Result<serving::ServingPlan> plan_for(const models::ResolvedModel& model,
                                      const serving::ServeArgs& args, const ServingContext& sc) {
  serving::ServingInput in;
  in.model = model;
  in.args = args;
  in.device_total_bytes = sc.device_total_bytes;
  in.budget_bytes = sc.budget_bytes;
  in.budget_given = sc.budget_given;
  in.pool = sc.pool;
  return serving::make_serving_plan(in);
}

}  // namespace

Result<ServingContext> serving_context(const PlanFlags& flags, const plan::PlanEnvironment& env,
                                       const Config& config) {
  ServingContext sc;
  if (flags.budget != "auto") {
    auto b = parse_bytes(flags.budget, DefaultUnit::gib);
    if (!b) return fail(Errc::invalid_argument, fmt::format("--budget: {}", b.error().detail));
    sc.budget_bytes = *b;
    sc.budget_given = true;
  }
  PoolOptions options = env.pool_options;
  if (!flags.overhead.empty()) {
    auto o = parse_bytes(flags.overhead, DefaultUnit::gib);
    if (!o) return fail(Errc::invalid_argument, fmt::format("--overhead: {}", o.error().detail));
    options.overhead_bytes = *o;
  }
  if (env.pool) {
    sc.pool = env.pool;
  } else {
    auto pool = read_pool(env.root, options);
    if (!pool && flags.budget == "auto") return tl::unexpected(pool.error());
    if (pool) sc.pool = *pool;
  }
  if (flags.budget == "auto") sc.budget_bytes = sc.pool->budget_bytes;
  if (!flags.device_total.empty()) {
    auto d = parse_bytes(flags.device_total, DefaultUnit::gib);
    if (!d || *d == 0)
      return fail(Errc::invalid_argument,
                  fmt::format("--device-total: {}", d ? "must be positive" : d.error().detail));
    sc.device_total_bytes = *d;
  } else if (sc.pool) {
    sc.device_total_bytes = sc.pool->total_bytes;
  }
  sc.scan.device_total_bytes = sc.device_total_bytes;
  sc.scan.rules.small_workload_bytes = config.get_bytes("procs.small_workload");
  sc.scan.rules.near_capacity_fraction = config.get_number("procs.near_capacity_fraction");
  sc.scan.rules.orphan_min_bytes = config.get_bytes("procs.orphan_min");
  return sc;
}

Result<serving::CommandLine> engine_words(const PlanFlags& flags) {
  auto cl = serving::split_command_line(flags.serve_args, "--serve-args");
  if (!cl) return tl::unexpected(cl.error());
  for (const auto& w : flags.engine_words) {
    const auto eq = w.find('=');
    if (cl->argv.empty() && eq != std::string::npos && eq > 0 && w.rfind('-', 0) != 0) {
      cl->env.emplace_back(w.substr(0, eq), w.substr(eq + 1));
    } else {
      cl->argv.push_back(w);
    }
  }
  return cl;
}

Result<serving::ServingPlan> serving_plan_from_flags(const PlanFlags& flags,
                                                     const plan::PlanEnvironment& env,
                                                     const ServingContext& sc) {
  const auto engine = serving::parse_serve_engine(flags.serve);
  if (!engine) {
    return fail(Errc::invalid_argument,
                fmt::format("--serve {}: not an engine (vllm, sglang, ollama, llamacpp, trtllm)",
                            quote_for_message(flags.serve)));
  }
  auto words = engine_words(flags);
  if (!words) return tl::unexpected(words.error());
  auto args = serving::parse_serve_args(*engine, words->argv, words->env, sc.device_total_bytes);
  if (!args) return tl::unexpected(args.error());
  auto input = plan_input_from_flags(flags);
  if (!input) return tl::unexpected(input.error());
  auto model = plan::resolve_model(input->model, env.hf_cache, env.hub);
  if (!model) return tl::unexpected(model.error());
  return plan_for(*model, *args, sc);
}

Result<std::vector<serving::PlannedJob>> beside_jobs(const PlanFlags& flags,
                                                     const plan::PlanEnvironment& env,
                                                     const ServingContext& sc,
                                                     std::vector<std::string>& notes) {
  std::vector<serving::PlannedJob> out;
  for (const auto& command : flags.beside) {
    auto job = serving::planned_job(command, std::nullopt, sc.scan);
    if (!job) return tl::unexpected(job.error());
    const auto engine = serve_engine_of(job->workload);
    if (engine) {
      const auto& argv = job->workload.processes.front().argv;
      auto cl = serving::split_command_line(command, "--beside");
      auto args =
          serving::parse_serve_args(*engine, argv, cl ? cl->env : EnvList{}, sc.device_total_bytes);
      if (!args) {
        return fail(
            Errc::invalid_argument,
            fmt::format("--beside {}: {}", quote_for_message(command), args.error().detail));
      }
      if (args->model) {
        plan::ModelRef ref;
        ref.name = *args->model;
        auto model = plan::resolve_model(ref, env.hf_cache, env.hub);
        if (model) {
          auto sp = plan_for(*model, *args, sc);
          if (sp) {
            auto sized = serving::planned_job(command, *sp, sc.scan);
            if (!sized) return tl::unexpected(sized.error());
            job = std::move(sized);
          } else {
            notes.push_back(fmt::format("--beside {}: not sized: {}", quote_for_message(command),
                                        sp.error().detail));
          }
        } else {
          notes.push_back(fmt::format("--beside {}: model not sized: {}",
                                      quote_for_message(command), model.error().detail));
        }
      }
    }
    out.push_back(std::move(*job));
  }
  return out;
}

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
        "refusal: one {}-token sequence needs {} more KV than the pool holds: the engine will "
        "not start\n",
        p.context, format_bytes(static_cast<std::uint64_t>(p.kv_shortfall_bytes)));
  }
  out += fmt::format("claims: {}\n", p.claim_text);
  out += fmt::format("footprint {} in the pool; up to {} while loading\n",
                     format_bytes(p.footprint_bytes), format_bytes(p.startup_peak_bytes));
  out +=
      fmt::format("budget {}: {}\n", format_bytes(p.budget_bytes), plan::verdict_name(p.verdict));
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
  j["verdict"] = std::string(verdict_kind_name(v.verdict.kind));
  j["summary"] = v.summary;
  j["need_bytes"] = v.verdict.need_bytes;
  j["room_bytes"] = v.verdict.room_bytes;
  j["reserved_bytes"] = v.verdict.reserved_bytes;
  j["heavy"] = v.heavy;
  nlohmann::json planned = nlohmann::json::array();
  for (const auto& p : jobs) {
    planned.push_back({{"command", p.command},
                       {"engine", std::string(engine_name(p.workload.kind.engine))},
                       {"cap", p.workload.cap.text},
                       {"cap_state", std::string(cap_state_name(p.workload.cap.state))},
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

}  // namespace sparkops::cli

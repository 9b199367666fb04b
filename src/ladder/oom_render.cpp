#include "ladder/oom_render.hpp"

#include <fmt/format.h>

#include "base/json_text.hpp"
#include "base/time_format.hpp"
#include "base/units.hpp"

namespace sparkops::ladder {
namespace {

using nlohmann::json;

// The failure in words for people; JSON keeps oom_kind_name's tokens for scripts.
std::string_view oom_kind_words(OomKind k) {
  switch (k) {
    case OomKind::not_oom:
      return "not an out-of-memory failure";
    case OomKind::cuda_allocator:
      return "CUDA caching allocator out of memory";
    case OomKind::accelerator_runtime:
      return "accelerator runtime out of memory";
    case OomKind::host_oom_killer:
      return "killed by the host OOM killer";
    case OomKind::cgroup_oom_killer:
      return "killed by the cgroup OOM killer";
    case OomKind::server_admission:
      return "inference server refused to start for lack of memory";
    case OomKind::driver:
      return "NVIDIA driver memory error";
  }
  return "not an out-of-memory failure";
}

std::string facts_line(const OomReport& r) {
  std::string line;
  const auto add = [&line](std::string part) {
    if (!line.empty()) line += ", ";
    line += part;
  };
  if (r.requested_bytes) add(fmt::format("requested {}", format_bytes(*r.requested_bytes)));
  if (r.capacity_bytes) add(fmt::format("capacity {}", format_bytes(*r.capacity_bytes)));
  if (r.free_bytes) add(fmt::format("free {}", format_bytes(*r.free_bytes)));
  if (r.process_name || r.process_pid) {
    add(fmt::format("process {}{}", r.process_name.value_or("?"),
                    r.process_pid ? fmt::format(" (pid {})", *r.process_pid) : ""));
  }
  if (r.bitsandbytes_on_stack) add("bitsandbytes on the stack");
  return line;
}

std::string step_status(LadderStep s, const OomView& v, const std::optional<LadderStep>& next) {
  std::string why;
  for (auto it = v.state.steps.rbegin(); it != v.state.steps.rend(); ++it) {
    if (it->step == s) {
      return fmt::format("[x] tried {}: {}{}", format_iso8601_utc_ms(it->at),
                         step_result_name(it->result), it->forced ? " (forced)" : "");
    }
  }
  if (!step_applies(s, v.ctx, &why)) return fmt::format("[-] does not apply: {}", why);
  if (next && *next == s) return "[>] next";
  return "[ ] not yet";
}

json step_json(const StepAdvice& a) {
  json j = json::object();
  j["id"] = std::string(step_id(a.step));
  j["name"] = std::string(step_name(a.step));
  j["title"] = std::string(step_title(a.step));
  j["action"] = a.action;
  j["commands"] = a.commands;
  j["changes"] = a.changes;
  j["details"] = a.details;
  if (a.new_run) {
    j["values"] = json{{"method", std::string(plan::method_name(a.new_run->method))},
                       {"batch", a.new_run->batch},
                       {"seq", a.new_run->seq},
                       {"nodes", a.new_run->nodes}};
  } else {
    j["values"] = nullptr;
  }
  return j;
}

std::optional<LadderStep> shown_next(const OomView& v) {
  if (!v.advice.next) return std::nullopt;
  return v.advice.next->step;
}

std::string gib(const std::optional<std::uint64_t>& b) {
  return b ? format_bytes(*b) : "n/a";
}

}  // namespace

std::string render_oom_text(const OomView& v) {
  std::string out;
  if (v.recorded) {
    out += fmt::format("Recorded step {} ({}): {}{}\n", step_id(v.recorded->step),
                       step_title(v.recorded->step), step_result_name(v.recorded->result),
                       v.recorded->forced ? " (forced past an untried step)" : "");
  }
  if (v.report) {
    const auto& r = *v.report;
    if (r.kind == OomKind::not_oom) {
      out += fmt::format("Failure: {}\n", oom_kind_words(OomKind::not_oom));
      if (!r.near_miss.empty()) {
        out += fmt::format("  near miss: {}, phase {}\n", r.near_miss, oom_phase_name(r.phase));
      }
    } else {
      out += fmt::format("Failure: {} ({}{}), phase {}\n", oom_kind_words(r.kind), r.evidence_text,
                         r.evidence == Evidence::inferred ? ", inferred" : "",
                         oom_phase_name(r.phase));
      if (const auto facts = facts_line(r); !facts.empty()) out += fmt::format("  {}\n", facts);
    }
    if (!r.phase_evidence.empty()) {
      out += fmt::format("  phase evidence: \"{}\"\n", r.phase_evidence);
    }
  }
  for (const auto& note : v.advice.notes) out += fmt::format("Note: {}\n", note);
  if (!v.advice.ladder_applies) return out;
  out += fmt::format("Ladder ({}{}):\n", v.state_path, v.state_saved ? "" : ", not saved yet");
  const auto next = shown_next(v);
  for (const auto s : kLadderOrder) {
    const bool server_step = s == LadderStep::server_hold || s == LadderStep::server_cap;
    const bool training_step = s == LadderStep::packing || s == LadderStep::batch ||
                               s == LadderStep::method_lora || s == LadderStep::method_qlora;
    if ((v.ctx.server && training_step) || (!v.ctx.server && server_step)) continue;
    out += fmt::format("  {:<3}{:<36}{}\n", step_id(s), step_title(s), step_status(s, v, next));
  }
  if (v.advice.next) {
    const auto& a = *v.advice.next;
    out += fmt::format("Next: step {}: {}\n", step_id(a.step), a.action);
    for (const auto& c : a.commands) out += fmt::format("  $ {}\n", c);
    for (const auto& c : a.changes) out += fmt::format("  set {}\n", c);
    for (const auto& d : a.details) out += fmt::format("  - {}\n", d);
    out += fmt::format("  when tried: sparkops oom --done {} [--result ok]\n", step_id(a.step));
  }
  return out;
}

json oom_to_json(const OomView& v) {
  json j = json::object();
  if (v.report) {
    const auto& r = *v.report;
    j["kind"] = std::string(oom_kind_name(r.kind));
    j["phase"] = std::string(oom_phase_name(r.phase));
    j["evidence"] = r.kind == OomKind::not_oom ? json(nullptr) : json(r.evidence_text);
    j["inferred"] = r.evidence == Evidence::inferred;
    j["requested_bytes"] = json_or_null(r.requested_bytes);
    j["capacity_bytes"] = json_or_null(r.capacity_bytes);
    j["free_bytes"] = json_or_null(r.free_bytes);
    j["process"] = json_or_null(r.process_name);
    j["pid"] = json_or_null(r.process_pid);
    j["bitsandbytes_on_stack"] = r.bitsandbytes_on_stack;
    j["phase_evidence"] = r.phase_evidence.empty() ? json(nullptr) : json(r.phase_evidence);
    j["near_miss"] = r.near_miss.empty() ? json(nullptr) : json(r.near_miss);
    j["memory_exhausted"] = is_memory_failure(r);
  } else {
    for (const char* key : {"kind", "phase", "evidence", "requested_bytes", "capacity_bytes",
                            "free_bytes", "process", "pid", "phase_evidence", "near_miss"}) {
      j[key] = nullptr;
    }
    j["inferred"] = false;
    j["bitsandbytes_on_stack"] = false;
    j["memory_exhausted"] = false;
  }
  const auto* last = v.state.last();
  j["ladder_step"] = last ? json(std::string(step_id(last->step))) : json(nullptr);
  j["ladder_applies"] = v.advice.ladder_applies;
  j["ladder"] = v.ctx.server ? "server" : "training";  // which ladder's steps (docs/oom-ladder.md)
  j["next_step"] = v.advice.next ? step_json(*v.advice.next) : json(nullptr);
  j["advice"] = v.advice.notes;
  j["notes"] = v.advice.notes;  // the "Note:" lines of the text, as every document names them
  json steps = json::array();
  for (const auto& r : v.state.steps) {
    steps.push_back(json{{"step", std::string(step_id(r.step))},
                         {"at", format_iso8601_utc_ms(r.at)},
                         {"result", std::string(step_result_name(r.result))},
                         {"forced", r.forced}});
  }
  j["tried"] = std::move(steps);
  j["state_file"] = v.state_path;
  j["recorded"] = v.recorded ? json(std::string(step_id(v.recorded->step))) : json(nullptr);
  return j;
}

std::vector<std::string> flush_notes(const FlushView& v) {
  std::vector<std::string> out;
  if (v.outcome.forced_past_trainer) {
    out.push_back(
        fmt::format("flushed with --force while a trainer runs: {}", fmt::join(v.trainers, "; ")));
  }
  return out;
}

std::string render_flush_text(const FlushView& v) {
  const auto& o = v.outcome;
  std::string out;
  if (v.mode == FlushMode::dry_run) {
    out += fmt::format("Would reclaim about {} (Cached {} - Shmem {} - Mapped {})\n",
                       format_bytes(o.estimate_bytes), gib(o.before.cached_bytes),
                       gib(o.before.shmem_bytes), gib(o.before.mapped_bytes));
    out += fmt::format("{:<14}{:>12}\n", "", "now");
    out += fmt::format("{:<14}{:>12}\n", "MemFree", gib(o.before.mem_free_bytes));
    out += fmt::format("{:<14}{:>12}\n", "MemAvailable", gib(o.before.mem_available_bytes));
    out += fmt::format("{:<14}{:>12}\n", "Cached", gib(o.before.cached_bytes));
    out += "Run `sudo sparkops flush` to flush.\n";
    return out;
  }
  const auto after = o.after.value_or(host::Meminfo{});
  out += fmt::format("{:<14}{:>12}{:>12}\n", "", "before", "after");
  out += fmt::format("{:<14}{:>12}{:>12}\n", "MemFree", gib(o.before.mem_free_bytes),
                     gib(after.mem_free_bytes));
  out += fmt::format("{:<14}{:>12}{:>12}\n", "MemAvailable", gib(o.before.mem_available_bytes),
                     gib(after.mem_available_bytes));
  out += fmt::format("{:<14}{:>12}{:>12}\n", "Cached", gib(o.before.cached_bytes),
                     gib(after.cached_bytes));
  if (o.reclaimed_bytes) {
    out += fmt::format("Reclaimed {} (MemFree after - before: what CUDA gains on a unified pool)\n",
                       format_signed_bytes(*o.reclaimed_bytes));
  }
  for (const auto& n : flush_notes(v)) out += fmt::format("Warning: {}\n", n);
  if (v.recorded_in) out += fmt::format("Recorded ladder step 1 in {}\n", *v.recorded_in);
  return out;
}

json flush_to_json(const FlushView& v) {
  const auto& o = v.outcome;
  const auto mem = [](const host::Meminfo& m) {
    return json{{"mem_free_bytes", json_or_null(m.mem_free_bytes)},
                {"mem_available_bytes", json_or_null(m.mem_available_bytes)},
                {"cached_bytes", json_or_null(m.cached_bytes)},
                {"shmem_bytes", json_or_null(m.shmem_bytes)},
                {"mapped_bytes", json_or_null(m.mapped_bytes)}};
  };
  json j = json::object();
  j["dry_run"] = v.mode == FlushMode::dry_run;
  j["before"] = mem(o.before);
  j["after"] = o.after ? mem(*o.after) : json(nullptr);
  j["estimate_bytes"] = o.estimate_bytes;
  j["reclaimed_bytes"] = json_or_null(o.reclaimed_bytes);
  j["forced_past_trainer"] = o.forced_past_trainer;
  j["trainers"] = v.trainers;
  j["recorded_in"] = json_or_null(v.recorded_in);
  j["notes"] = flush_notes(v);
  return j;
}

}  // namespace sparkops::ladder

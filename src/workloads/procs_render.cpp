#include "workloads/procs_render.hpp"

#include <fmt/format.h>

#include "base/table.hpp"
#include "base/time_format.hpp"
#include "base/units.hpp"
#include "base/utf8.hpp"

namespace sparkops::workloads {

namespace {

constexpr std::size_t kCommandJsonMax = 400;

std::string opt_bytes(const std::optional<std::uint64_t>& b) {
  return b ? format_bytes(*b) : "-";
}

std::string age_text(const std::optional<std::chrono::milliseconds>& age) {
  return age ? format_duration(*age) : "-";
}

// Cuts at a character boundary, so a cut name stays well-formed UTF-8.
std::string cut(std::string s, std::size_t max) {
  if (s.size() > max) {
    s = std::string(utf8_prefix(s, max - 3)) + "...";
  }
  return s;
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    out += a;
  }
  return cut(std::move(out), kCommandJsonMax);
}

nlohmann::json opt_json(const std::optional<std::uint64_t>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json advice_json(const std::vector<StopAdvice>& list) {
  auto arr = nlohmann::json::array();
  for (const auto& s : list) {
    arr.push_back(
        {{"pid", s.pid}, {"label", s.label}, {"reason", s.reason}, {"frees_bytes", s.frees_bytes}});
  }
  return arr;
}

nlohmann::json process_json(const WorkloadProcess& p) {
  return {
      {"pid", p.pid},
      {"ppid", p.ppid},
      {"engine", engine_name(p.kind.engine)},
      {"role", role_name(p.kind.role)},
      {"label", p.kind.label},
      {"comm", p.comm},
      {"command", command_line(p.argv)},
      {"uid", p.uid ? nlohmann::json(*p.uid) : nlohmann::json(nullptr)},
      {"rss_bytes", opt_json(p.rss_bytes)},
      {"pss_bytes", opt_json(p.pss_bytes)},
      {"swap_bytes", opt_json(p.swap_bytes)},
      {"gpu_bytes", opt_json(p.gpu_bytes)},
      {"age_seconds", p.age ? nlohmann::json(static_cast<double>(p.age->count()) / 1000.0)
                            : nlohmann::json(nullptr)},
      {"started_at", p.started_unix_seconds ? nlohmann::json(format_iso8601_utc_ms(SystemTime{
                                                  std::chrono::seconds{*p.started_unix_seconds}}))
                                            : nlohmann::json(nullptr)},
      {"environment_readable", p.env_readable},
  };
}

// The lines of the table's notes, each as the text shows it (after its indentation) and as --json
// `notes` carries it: the same strings, so a warning never appears in only one of them.
std::vector<std::string> workload_note_lines(const ProcsReport& r) {
  std::vector<std::string> out;
  for (const auto& w : r.scan.workloads) {
    std::vector<std::string> lines = w.cap.notes;
    if (w.heavy) lines.insert(lines.begin(), "heavy: " + w.heavy_reason);
    for (const auto& line : lines)
      out.push_back(fmt::format("{} {}: {}", w.pid, w.kind.label, line));
  }
  return out;
}

std::string gpu_line(const ProcsReport& r) {
  return r.gpu_note.empty() ? std::string() : fmt::format("GPU: {}", r.gpu_note);
}

std::string scan_line(const WorkloadScan& scan) {
  if (scan.stats.pids_vanished == 0 && scan.stats.files_unreadable == 0) return {};
  return fmt::format(
      "Scanned {} PIDs: {} exited mid-scan, {} files unreadable (other users' processes).",
      scan.stats.pids_listed, scan.stats.pids_vanished, scan.stats.files_unreadable);
}

std::vector<std::string> verdict_warning_lines(const ProcsReport& r) {
  std::vector<std::string> out;
  if (!r.verdict) return out;
  for (const auto& o : r.verdict->orphans) {
    out.push_back(
        fmt::format("Orphan: {} ({}): {}; `kill {}` frees it", o.pid, o.label, o.reason, o.pid));
  }
  if (!r.verdict->oversubscription.empty()) {
    out.push_back(fmt::format("Warning: {}", r.verdict->oversubscription));
  }
  return out;
}

}  // namespace

std::string render_procs_table(const ProcsReport& r, std::optional<std::size_t> width) {
  std::string out;
  const auto& scan = r.scan;
  if (scan.workloads.empty()) {
    out += "No inference server, trainer or GPU process found.\n";
  } else {
    // Identity and the verdict's inputs stay; the per-process detail goes first when narrow.
    Table table({{"PID"},
                 {"KIND", Align::left, 0, true, 16},
                 {"CAP", Align::left, 0, true, 20},
                 {"CLAIM", Align::right},
                 {"RSS", Align::right, 4},
                 {"PSS", Align::right, 2},
                 {"GPU", Align::right, 3},
                 {"HEAVY"},
                 {"AGE", Align::right, 5}});
    for (const auto& w : scan.workloads) {
      const auto& root = w.processes.front();
      std::string heavy = w.heavy ? "yes" : "no";
      if (w.orphan) heavy += "*";
      table.add_row({std::to_string(w.pid), w.kind.label, w.cap.text, opt_bytes(w.claim_bytes),
                     format_bytes(w.rss_bytes), format_bytes(w.pss_bytes),
                     format_bytes(w.gpu_bytes), heavy, age_text(root.age)});
      for (std::size_t i = 1; i < w.processes.size(); ++i) {
        const auto& p = w.processes[i];
        table.add_row({"  " + std::to_string(p.pid), "- " + p.kind.label, "", "",
                       opt_bytes(p.rss_bytes), opt_bytes(p.pss_bytes ? p.pss_bytes : p.rss_bytes),
                       opt_bytes(p.gpu_bytes), "", age_text(p.age)});
      }
    }
    out += table.render(width);
    out +=
        "PSS falls back to RSS where smaps_rollup is unreadable; GPU is per-process GPU memory "
        "(NVML/nvidia-smi). * orphan.\n";
    if (width && !table.left_out().empty()) {
      out += left_out_note(table.left_out(), *width) + "\n";
    }
  }
  if (const auto lines = workload_note_lines(r); !lines.empty()) {
    out += "\nNotes:\n";
    for (const auto& line : lines) out += fmt::format("  {}\n", line);
  }
  if (const auto line = gpu_line(r); !line.empty()) out += fmt::format("\n{}\n", line);
  if (!scan.gpu_outside.empty()) {
    out += scan.nested_pid_namespace
               ? "\nGPU processes (host PIDs; this /proc is a nested PID namespace, so they are "
                 "not joined):\n"
               : "\nGPU processes outside this PID namespace (not in this /proc):\n";
    for (const auto& g : scan.gpu_outside) {
      out += fmt::format("  {} {} {}\n", g.pid, g.name.empty() ? "-" : g.name,
                         opt_bytes(g.used_bytes));
    }
  }
  if (const auto line = scan_line(scan); !line.empty()) out += fmt::format("\n{}\n", line);
  // The claims are counted where the verdict judges a new run: the pool, or a discrete GPU's memory
  // (workloads/coexistence.hpp CoexistenceSpace).
  const bool on_gpu = r.verdict && r.verdict->source == host::BudgetSource::gpu_memory;
  if (r.pool) {
    out += on_gpu ? fmt::format(
                        "\nHost memory: total {}, available {}, budget {} (overhead {})\n",
                        format_bytes(r.pool->total_bytes), format_bytes(r.pool->available_bytes),
                        format_bytes(r.pool->budget_bytes), format_bytes(r.pool->overhead_bytes))
                  : fmt::format(
                        "\nPool: total {}, available {}, budget {} (overhead {}); claims and "
                        "holdings of the workloads above: {}\n",
                        format_bytes(r.pool->total_bytes), format_bytes(r.pool->available_bytes),
                        format_bytes(r.pool->budget_bytes), format_bytes(r.pool->overhead_bytes),
                        format_bytes(r.verdict ? r.verdict->reserved_bytes : 0));
  }
  if (r.training_budget && r.training_budget->device) {
    out += fmt::format("Training budget {}: GPU {}'s free memory (a discrete GPU's own memory)",
                       format_bytes(r.training_budget->bytes), r.training_budget->device->index);
    if (on_gpu) {
      out += fmt::format("; claims and GPU holdings of the workloads above: {}",
                         format_bytes(r.verdict->reserved_bytes));
    }
    out += "\n";
  }
  for (const auto& line : verdict_warning_lines(r)) out += line + "\n";
  if (r.verdict) {
    out += fmt::format("Verdict: {}\n", r.verdict->summary);
  }
  return out;
}

nlohmann::json procs_to_json(const ProcsReport& r) {
  const auto& scan = r.scan;
  auto workloads = nlohmann::json::array();
  for (const auto& w : scan.workloads) {
    auto procs = nlohmann::json::array();
    for (const auto& p : w.processes) procs.push_back(process_json(p));
    workloads.push_back({
        {"pid", w.pid},
        {"engine", engine_name(w.kind.engine)},
        {"role", role_name(w.kind.role)},
        {"label", w.kind.label},
        {"cap",
         {{"state", cap_state_name(w.cap.state)},
          {"text", w.cap.text},
          {"fraction", w.cap.fraction ? nlohmann::json(*w.cap.fraction) : nlohmann::json(nullptr)},
          {"kv_cache_bytes", opt_json(w.cap.kv_cache_bytes)},
          {"notes", w.cap.notes}}},
        {"claim_bytes", opt_json(w.claim_bytes)},
        {"rss_bytes", w.rss_bytes},
        {"pss_bytes", w.pss_bytes},
        {"gpu_bytes", w.gpu_bytes},
        {"actual_bytes", w.actual_bytes},
        {"reserved_bytes", w.reserved_bytes()},
        {"heavy", w.heavy},
        {"heavy_reason", w.heavy_reason},
        {"orphan", w.orphan},
        {"processes", procs},
    });
  }
  auto outside = nlohmann::json::array();
  for (const auto& g : scan.gpu_outside) {
    outside.push_back({{"pid", g.pid}, {"name", g.name}, {"used_bytes", opt_json(g.used_bytes)}});
  }
  nlohmann::json doc = {
      {"device_total_bytes", scan.device_total_bytes},
      {"nested_pid_namespace", scan.nested_pid_namespace},
      {"workloads", workloads},
      {"gpu_outside_namespace", outside},
      {"gpu_note", r.gpu_note.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.gpu_note)},
      {"stats",
       {{"pids_listed", scan.stats.pids_listed},
        {"pids_vanished", scan.stats.pids_vanished},
        {"files_unreadable", scan.stats.files_unreadable}}},
      {"trainer_running", trainer_running(scan)},
  };
  // Every note and warning line the text shows, word for word.
  std::vector<std::string> notes = workload_note_lines(r);
  for (const auto& line : {gpu_line(r), scan_line(scan)}) {
    if (!line.empty()) notes.push_back(line);
  }
  for (auto& line : verdict_warning_lines(r)) notes.push_back(std::move(line));
  doc["notes"] = notes;
  if (r.training_budget) {
    const auto& b = *r.training_budget;
    doc["training_budget"] = {
        {"bytes", b.bytes},
        {"source", host::budget_source_name(b.source)},
        {"gpu_index", b.device ? nlohmann::json(b.device->index) : nlohmann::json(nullptr)}};
  } else {
    doc["training_budget"] = nullptr;
  }
  if (r.pool) {
    doc["pool"] = {{"total_bytes", r.pool->total_bytes},
                   {"available_bytes", r.pool->available_bytes},
                   {"budget_bytes", r.pool->budget_bytes},
                   {"overhead_bytes", r.pool->overhead_bytes}};
  } else {
    doc["pool"] = nullptr;
  }
  if (r.verdict) {
    const auto& v = *r.verdict;
    doc["verdict"] = {
        {"kind", verdict_kind_name(v.kind)},
        {"question", r.need_given},
        {"source", host::budget_source_name(v.source)},
        {"gpu_index", v.gpu_index ? nlohmann::json(*v.gpu_index) : nlohmann::json(nullptr)},
        {"need_bytes", v.need_bytes},
        {"room_bytes", v.room_bytes},
        {"budget_now_bytes", v.budget_now_bytes},
        {"room_at_caps_bytes", v.room_at_caps_bytes},
        {"reserved_bytes", v.reserved_bytes},
        {"oversubscribed_bytes", v.oversubscribed_bytes},
        {"heavy_count", v.heavy_count},
        {"oversubscription",
         v.oversubscription.empty() ? nlohmann::json(nullptr) : nlohmann::json(v.oversubscription)},
        {"stop", advice_json(v.stop)},
        {"orphans", advice_json(v.orphans)},
        {"summary", v.summary}};
  } else {
    doc["verdict"] = nullptr;
  }
  return doc;
}

}  // namespace sparkops::workloads

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/time_format.hpp"
#include "base/units.hpp"
#include "gpu/throttle_reasons.hpp"
#include "tui/frame_sections.hpp"

namespace sparkops::tui::detail {

std::string gib(std::uint64_t bytes) {
  return format_gib(bytes);
}

std::string clock_time(SystemTime t) {
  // "2025-11-09T09:26:12.345Z" -> "09:26:12"
  const std::string iso = format_iso8601_utc_ms(t);
  return iso.size() >= 19 ? iso.substr(11, 8) : iso;
}

std::string pad(std::string s, std::size_t w) {
  const std::size_t n = display_width(s);
  if (n > w) return cut_to_width(s, w);
  return s + std::string(w - n, ' ');
}

std::string rpad(std::string s, std::size_t w) {
  const std::size_t n = display_width(s);
  if (n > w) return cut_to_width(s, w);
  return std::string(w - n, ' ') + s;
}

namespace {

std::string seconds_text(std::chrono::milliseconds interval) {
  return fmt::format("{:g}s", static_cast<double>(interval.count()) / 1000.0);
}

double celsius(std::int64_t millicelsius) {
  return static_cast<double>(millicelsius) / 1000.0;
}
double watts(std::uint64_t microwatts) {
  return static_cast<double>(microwatts) / 1e6;
}

// Appends "label value" with the value styled, and two spaces after.
void figure(Line& line, std::string_view label, std::string value, Style style) {
  line.add(std::string(label) + " ", Style::dim).add(std::move(value), style).add("  ");
}

// The range of a series' present values.
std::optional<std::pair<double, double>> range_of(const Series& s, std::size_t last) {
  std::optional<std::pair<double, double>> r;
  const std::size_t first = s.size() > last ? s.size() - last : 0;
  for (std::size_t i = first; i < s.size(); ++i) {
    if (!s[i]) continue;
    if (!r) r = std::pair{*s[i], *s[i]};
    r->first = std::min(r->first, *s[i]);
    r->second = std::max(r->second, *s[i]);
  }
  return r;
}

Style temperature_style(const Ctx& c, double temp_c) {
  return temp_c >= c.model.thresholds.detector.hot_celsius ? Style::bad : Style::ok;
}

}  // namespace

void header(const Ctx& c, Frame& out) {
  const status::StatusReport& r = c.model.report;
  Line line;
  line.add("sparkops top", Style::title);
  line.add("  " + printable(r.system.hostname.value_or("?")));
  line.add("  " + clock_time(r.taken_at) + " UTC", Style::dim);
  line.add("  every " + seconds_text(c.view.interval), Style::dim);
  if (c.view.frozen) line.add("  FROZEN", Style::warn);
  const std::string right = "? help  q quit";
  const std::size_t used = line.width();
  if (used + 2 + right.size() <= c.columns) {
    line.add(std::string(c.columns - used - right.size(), ' ')).add(right, Style::dim);
  }
  out.push_back(std::move(line));
}

void pool(const Ctx& c, Frame& out) {
  const status::StatusReport& r = c.model.report;
  if (!r.pool) {
    out.push_back(
        Line().add("POOL", Style::heading).add("  unreadable: /proc/meminfo", Style::bad));
    return;
  }
  const host::PoolView& p = *r.pool;
  const Thresholds& t = c.model.thresholds;
  const Style budget_style = p.budget_bytes == 0                     ? Style::bad
                             : p.budget_bytes < t.tight_margin_bytes ? Style::warn
                                                                     : Style::ok;
  Line fig;
  fig.add("POOL", Style::heading).add(" GiB  ", Style::dim);
  const bool w = c.wide();
  figure(fig, "total", gib(p.total_bytes), Style::plain);
  figure(fig, w ? "available" : "avail", gib(p.available_bytes), Style::plain);
  figure(fig, w ? "free now" : "free", gib(p.free_now_bytes), Style::plain);
  figure(fig, w ? "reclaimable by flush" : "flush", gib(p.reclaimable_bytes),
         p.flush_suggested ? Style::warn : Style::plain);
  figure(fig, "budget", gib(p.budget_bytes), budget_style);
  if (p.cgroup_headroom_bytes) figure(fig, "cgroup", gib(*p.cgroup_headroom_bytes), Style::warn);
  out.push_back(std::move(fig));

  // The bar over the total: used (total - available), reclaimable (available - free), free now.
  const bool uni = c.glyphs == Glyphs::unicode;
  const std::string legend =
      uni ? " █ used ▒ reclaimable ░ free now" : " # used ~ reclaimable . free now";
  const std::size_t cells =
      c.columns > legend.size() + 12 ? c.columns - display_width(legend) - 2 : 10;
  const double total = static_cast<double>(std::max<std::uint64_t>(p.total_bytes, 1));
  const std::uint64_t used_bytes = p.total_bytes - std::min(p.total_bytes, p.available_bytes);
  auto share = [&](std::uint64_t b) {
    auto n = static_cast<std::size_t>(
        std::lround(static_cast<double>(b) / total * static_cast<double>(cells)));
    return b > 0 ? std::max<std::size_t>(n, 1) : n;  // a non-zero part stays visible
  };
  std::size_t used_n = std::min(share(used_bytes), cells);
  std::size_t free_n = std::min(share(p.free_now_bytes), cells - used_n);
  const std::size_t reclaim_n = cells - used_n - free_n;
  auto repeat = [](std::string_view g, std::size_t n) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s += g;
    return s;
  };
  Line bar;
  bar.add("[", Style::dim)
      .add(repeat(uni ? "█" : "#", used_n), budget_style == Style::ok ? Style::plain : budget_style)
      .add(repeat(uni ? "▒" : "~", reclaim_n), Style::dim)
      .add(repeat(uni ? "░" : ".", free_n), Style::ok)
      .add("]", Style::dim)
      .add(legend, Style::dim);
  out.push_back(std::move(bar));

  // History: available and free now, both on the 0..total scale so their gap is the page cache.
  const std::size_t width = c.columns > 40 ? (c.columns - 36) / 2 : 4;
  Line hist;
  hist.add("  history ", Style::dim).add("avail ", Style::dim);
  hist.add(pad(sparkline(c.model.pool_available_bytes, 0, total, width, c.glyphs), width));
  hist.add("  free ", Style::dim);
  hist.add(pad(sparkline(c.model.pool_free_bytes, 0, total, width, c.glyphs), width), Style::ok);
  hist.add(fmt::format("  0-{} GiB", gib(p.total_bytes)), Style::dim);
  out.push_back(std::move(hist));
}

std::size_t gpu_lines(const Ctx& c, bool compact) {
  const auto& g = c.model.report.gpu;
  if (g.state != gpu::GpuState::ok || g.snapshots.empty()) return 1;
  return g.snapshots.size() * (compact ? 2 : 4);
}

namespace {

const GpuActivity* activity_of(const Ctx& c, unsigned index) {
  for (const auto& a : c.model.gpus) {
    if (a.index == index) return &a;
  }
  return nullptr;
}

std::string device_name(const Ctx& c, unsigned index) {
  for (const auto& d : c.model.report.gpu.devices) {
    if (d.index == index) return printable(d.name);
  }
  return "?";
}

// "+0.50s" or "+0": the time a counter advanced during the interval; "-" when not reported.
std::string delta_text(const std::optional<std::chrono::nanoseconds>& d) {
  if (!d) return "-";
  if (d->count() == 0) return "+0";
  return fmt::format("+{:.2f}s", std::chrono::duration<double>(*d).count());
}

bool advanced(const std::optional<std::chrono::nanoseconds>& d) {
  return d && d->count() > 0;
}

void gpu_block(const Ctx& c, const gpu::GpuSnapshot& s, bool compact, Frame& out) {
  const Thresholds& t = c.model.thresholds;
  const GpuActivity* a = activity_of(c, s.index);
  Line l1;
  l1.add(fmt::format("GPU{}", s.index), Style::heading).add(" " + device_name(c, s.index) + "  ");
  if (s.temp_millicelsius) {
    const double temp = celsius(*s.temp_millicelsius);
    l1.add(fmt::format("{:.0f}{}", temp, c.degrees()), temperature_style(c, temp)).add("  ");
  }
  if (s.power_microwatts) {
    const double p = watts(*s.power_microwatts);
    // Against the enforced limit where the driver reports one, else GB10's sustained ceiling.
    const bool limit = s.power_limit_microwatts.has_value();
    const double ceiling = limit ? watts(*s.power_limit_microwatts) : t.detector.ceiling_watts;
    const Style st = p >= ceiling - t.detector.ceiling_band_watts ? Style::warn : Style::ok;
    l1.add(fmt::format("{:.1f}", p), st)
        .add(fmt::format(" W of {}{:.0f}{}  ", limit ? "" : "~", ceiling, limit ? " limit" : ""),
             Style::dim);
  }
  if (s.sm_clock_mhz) {
    l1.add("SM ", Style::dim).add(fmt::format("{}", *s.sm_clock_mhz));
    if (s.sm_clock_max_mhz) l1.add(fmt::format("/{}", *s.sm_clock_max_mhz), Style::dim);
    l1.add(" MHz  ", Style::dim);
  }
  if (s.util_gpu_percent)
    l1.add("util ", Style::dim).add(fmt::format("{}%  ", *s.util_gpu_percent));
  if (s.pstate) l1.add(fmt::format("P{}", *s.pstate)).add("  ");
  if (s.memory && c.wide()) {
    l1.add("mem ", Style::dim)
        .add(fmt::format("{}/{} GiB", gib(s.memory->used_bytes), gib(s.memory->total_bytes)));
  }
  out.push_back(std::move(l1));

  // Reasons (instantaneous bits) and counters (time in each reason during the interval): the bits
  // miss most throttling, the counters do not.
  Line l2;
  const std::uint64_t bits = s.clocks_event_reasons.value_or(0);
  const bool throttling_bits = (bits & gpu::kThrottlingReasonsMask) != 0;
  l2.add("  reasons ", Style::dim)
      .add(s.clocks_event_reasons ? gpu::reason_names_joined(bits, ",") : std::string("-"),
           throttling_bits ? Style::bad : Style::plain);
  bool hidden = false;
  if (a && a->interval.count() > 0) {
    const gpu::ThrottleCounters& d = a->counter_deltas;
    hidden = !throttling_bits && (advanced(d.sw_power_cap) || advanced(d.sw_thermal) ||
                                  advanced(d.hw_thermal) || advanced(d.hw_power_brake));
    l2.add("  counters", Style::dim);
    auto counter = [&](std::string_view name, const std::optional<std::chrono::nanoseconds>& v) {
      l2.add(" " + std::string(name) + " ", Style::dim)
          .add(delta_text(v), advanced(v) ? Style::warn : Style::plain);
    };
    counter("pwr_cap", d.sw_power_cap);
    counter("sw_therm", d.sw_thermal);
    counter("hw_therm", d.hw_thermal);
    counter("brake", d.hw_power_brake);
    if (c.wide()) l2.add(fmt::format(" in the last {}", format_duration(a->interval)), Style::dim);
  } else {
    l2.add("  counters: deltas from the next refresh", Style::dim);
  }
  out.push_back(std::move(l2));
  if (compact) return;

  Line l3;
  l3.add("  episodes ", Style::dim);
  if (!a || a->open_causes.empty()) {
    l3.add("none open", Style::ok);
  } else {
    bool platform = false;
    std::string names;
    for (const auto cause : a->open_causes) {
      if (!names.empty()) names += ",";
      names += sampling::throttle_cause_name(cause);
      platform = platform || cause == sampling::ThrottleCause::platform_cap;
    }
    l3.add(names, Style::bad);
    if (hidden) {
      l3.add(c.wide() ? "  hidden: bits clear, counters advancing" : "  hidden (bits clear)",
             Style::bad);
    }
    if (platform && c.wide()) {
      l3.add(fmt::format(
                 "  platform cap: power flat at the ~{:.0f} W ceiling while temperature climbs",
                 t.detector.ceiling_watts),
             Style::bad);
    }
  }
  out.push_back(std::move(l3));

  Line l4;
  const std::size_t width = c.columns > 48 ? (c.columns - 44) / 2 : 4;
  l4.add("  temp ", Style::dim);
  if (a) {
    const auto tr = range_of(a->temperature_celsius, width);
    l4.add(pad(
        sparkline(a->temperature_celsius, tr ? tr->first : 0, tr ? tr->second : 1, width, c.glyphs),
        width));
    l4.add(tr ? fmt::format(" {:.0f}-{:.0f}{}", tr->first, tr->second, c.degrees())
              : std::string(" -"),
           Style::dim);
    const auto pr = range_of(a->power_watts, width);
    const double top = std::max(t.detector.ceiling_watts, pr ? pr->second : 0.0);
    l4.add("  power ", Style::dim);
    l4.add(pad(sparkline(a->power_watts, 0, top, width, c.glyphs), width));
    l4.add(fmt::format(" 0-{:.0f} W", top), Style::dim);
  }
  out.push_back(std::move(l4));
}

}  // namespace

void gpus(const Ctx& c, bool compact, Frame& out) {
  const status::GpuStatus& g = c.model.report.gpu;
  if (g.state != gpu::GpuState::ok || g.snapshots.empty()) {
    Line l;
    l.add("GPU", Style::heading)
        .add(fmt::format("  {} ({})", gpu::gpu_state_name(g.state), g.backend),
             g.state == gpu::GpuState::lost ? Style::bad : Style::dim);
    if (!g.detail.empty()) l.add("  " + printable(g.detail), Style::dim);
    out.push_back(std::move(l));
    return;
  }
  for (const auto& s : g.snapshots) gpu_block(c, s, compact, out);
}

void host(const Ctx& c, Frame& out) {
  const status::StatusReport& r = c.model.report;
  Line l;
  l.add("HOST", Style::heading).add("  ");
  if (r.hottest_sensor) {
    const double temp = celsius(r.hottest_sensor->temp_millicelsius);
    l.add("hottest ", Style::dim)
        .add(printable(r.hottest_sensor->name) + " ")
        .add(fmt::format("{:.1f}{}", temp, c.degrees()), temperature_style(c, temp))
        .add("  ");
  } else {
    l.add("no temperature sensor  ", Style::dim);
  }
  // Narrow: the system total and the GPU rail; wide: every rail the driver exposes.
  for (const auto& rail : r.spbm_rails) {
    if (!c.wide() && rail.name != "sys_total" && rail.name != "gpu") continue;
    l.add(printable(rail.name) + " ", Style::dim)
        .add(fmt::format("{:.1f} W  ", watts(rail.power_microwatts)));
  }
  if (r.spbm && r.spbm->prochot) {
    const bool on = *r.spbm->prochot != 0;
    l.add("PROCHOT ", Style::dim).add(on ? "asserted" : "no", on ? Style::bad : Style::ok);
  }
  out.push_back(std::move(l));
}

void pressure(const Ctx& c, Frame& out) {
  const status::StatusReport& r = c.model.report;
  const Thresholds& t = c.model.thresholds;
  const SinceStart& s = c.model.since_start;
  Line l;
  l.add("PRESSURE", Style::heading).add("  ");
  if (r.memory_pressure) {
    const double some = r.memory_pressure->some.avg10;
    l.add("some ", Style::dim)
        .add(fmt::format("{:.1f}%", some),
             some >= t.pressure.psi_some_percent ? Style::warn : Style::ok)
        .add("  ");
    if (r.memory_pressure->full) {
      const double full = r.memory_pressure->full->avg10;
      l.add("full ", Style::dim)
          .add(fmt::format("{:.1f}%", full),
               full >= t.pressure.psi_full_percent ? Style::bad : Style::ok)
          .add("  ");
    }
  } else {
    l.add("PSI -  ", Style::dim);
  }
  // Narrow frames drop the "since" label; ? help says the counts are since top started.
  if (c.wide()) l.add(fmt::format("since start ({}): ", format_duration(s.elapsed)), Style::dim);
  l.add("refaults ", Style::dim)
      .add(s.refaults ? fmt::format("{}", *s.refaults) : std::string("-"));
  if (s.refaults_per_second) {
    const bool high = *s.refaults_per_second >= t.pressure.refaults_per_second;
    l.add(fmt::format(" {:.0f}/s", *s.refaults_per_second), high ? Style::warn : Style::dim);
  }
  l.add("  ");
  if (c.wide()) {
    l.add("major faults ", Style::dim)
        .add(s.major_faults ? fmt::format("{}", *s.major_faults) : std::string("-"))
        .add("  ");
  }
  l.add("OOM kills ", Style::dim)
      .add(s.oom_kills ? fmt::format("{}", *s.oom_kills) : std::string("-"),
           s.oom_kills && *s.oom_kills > 0 ? Style::bad : Style::ok);
  out.push_back(std::move(l));
}

void help(const Ctx& c, std::size_t rows, Frame& out) {
  static constexpr std::string_view kHelp[] = {
      "KEYS",
      "  q        quit                      ?        this help (any key closes it)",
      "  m c a    sort workloads by memory, cap state and claim, age",
      "  Up Down  select a workload         k        SIGTERM the selected one (asks y/n)",
      "  f        freeze (stop refreshing)  + -      longer / shorter refresh interval",
      "",
      "POOL: used = total - available; reclaimable = available - free now (page cache a",
      "flush returns); budget = available (or cgroup room) - overhead.",
      "GPU: reasons are the driver's instantaneous bits; counters are the time each",
      "reason held clocks down during the last interval (they see what the bits miss).",
      "A platform cap is power flat at the sustained ceiling while temperature climbs.",
      "PRESSURE: refaults, major faults and OOM kills count from when top started.",
      "k signals only processes you own (any, as root), never on a captured --root.",
  };
  std::size_t n = 0;
  for (const auto line : kHelp) {
    if (n++ == rows) break;
    out.push_back(Line().add(std::string(line), line == "KEYS" ? Style::heading : Style::plain));
  }
  (void)c;
}

void footer(const Ctx& c, Frame& out) {
  const ViewState& v = c.view;
  Line l;
  if (v.confirm_pid) {
    l.add(fmt::format("Send SIGTERM to PID {}? y = yes, any other key = no", *v.confirm_pid),
          Style::warn);
  } else if (!v.message.empty()) {
    l.add(printable(v.message), Style::warn);
  } else {
    l.add("q", Style::heading).add(" quit  ", Style::dim);
    l.add("?", Style::heading).add(" help  ", Style::dim);
    l.add("m c a", Style::heading).add(" sort  ", Style::dim);
    l.add("f", Style::heading).add(v.frozen ? " resume  " : " freeze  ", Style::dim);
    l.add("+ -", Style::heading).add(" interval  ", Style::dim);
    l.add(c.glyphs == Glyphs::unicode ? "↑↓" : "Up/Dn", Style::heading)
        .add(" select  ", Style::dim);
    l.add("k", Style::heading).add(" SIGTERM", Style::dim);
  }
  out.push_back(std::move(l));
}

}  // namespace sparkops::tui::detail

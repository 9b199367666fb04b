#include "report/html_report.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/analysis_json.hpp"

namespace sparkops::embedded {
extern const std::string_view uplot_js;
extern const std::string_view uplot_css;
extern const std::string_view report_js;
extern const std::string_view report_css;
}  // namespace sparkops::embedded

namespace sparkops::report {

namespace {

using Json = nlohmann::ordered_json;

double epoch_seconds(SystemTime t) {
  return std::round(std::chrono::duration<double>(t.time_since_epoch()).count() * 1000.0) / 1000.0;
}

Json opt(const std::optional<double>& v, double scale = 100.0) {
  if (!v || !std::isfinite(*v)) return nullptr;
  return std::round(*v * scale) / scale;
}

// Text placed inside <script> must not contain "</" (it would close the element early).
std::string script_safe(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<' && i + 1 < s.size() && s[i + 1] == '/') {
      out += "<\\/";
      ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string html_escape(std::string_view s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// NVML clocks-event-reason bits that slow the clock (nvml.h): SW power cap 0x4, HW slowdown 0x8,
// SW thermal 0x20, HW thermal 0x40, HW power brake 0x80. Idle (0x1) and the settings bits are not
// throttling.
constexpr std::uint64_t kThrottleBits = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;

// The reasons a sample shows as throttling: counter time in the interval, else the reason bits (the
// counters catch what the instantaneous bits miss, so either is enough).
std::vector<std::string> throttle_reasons(const sampling::SampleRow& s) {
  std::vector<std::string> out;
  const auto counted = [&](const std::optional<double>& secs, const char* name, std::uint64_t bit) {
    if ((secs && *secs > 0) || (s.reasons_mask && (*s.reasons_mask & bit))) out.emplace_back(name);
  };
  counted(s.throttle_sw_power_cap_s, "sw_power_cap", 0x4);
  counted(std::nullopt, "hw_slowdown", 0x8);
  counted(s.throttle_sw_thermal_s, "sw_thermal", 0x20);
  counted(s.throttle_hw_thermal_s, "hw_thermal", 0x40);
  counted(s.throttle_hw_power_brake_s, "hw_power_brake", 0x80);
  return out;
}

// Throttle episodes as bands on the time axis: a sample's counters cover the interval since the
// previous sample, so a band runs from the previous sample's time to the last throttled one.
Json throttle_bands(const diagnose::ThermalLog& thermal) {
  Json bands = Json::array();
  std::optional<double> prev_time;
  for (const auto& s : thermal.samples) {
    const double t = epoch_seconds(s.time);
    const auto reasons = throttle_reasons(s);
    if (!reasons.empty()) {
      const double from = prev_time.value_or(t);
      std::string label = reasons.front();
      for (std::size_t i = 1; i < reasons.size(); ++i) label += "+" + reasons[i];
      if (!bands.empty() && bands.back()["to"].get<double>() >= from &&
          bands.back()["label"].get<std::string>() == label) {
        bands.back()["to"] = t;
      } else {
        bands.push_back(Json{{"from", from}, {"to", t}, {"label", label}});
      }
    }
    prev_time = t;
  }
  return bands;
}

Json chart_data(const trainlog::StepSeries& series, const diagnose::Diagnosis& d,
                const diagnose::ThermalLog* thermal, const ReportOptions& options) {
  Json data;
  const bool timed = !series.steps.empty() && series.steps.front().time && series.steps.back().time;
  data["x_is_time"] = timed;
  data["utc_offset_minutes"] = options.utc_offset.count() / 60;
  // One x range for every chart, so a band or a cursor sits at the same place in each.
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  const auto widen = [&](double x) {
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  };
  Json sx = Json::array(), sy = Json::array(), loss = Json::array();
  for (const auto& r : series.steps) {
    if (timed && !r.time) continue;
    const double x = timed ? epoch_seconds(*r.time) : static_cast<double>(r.step);
    widen(x);
    sx.push_back(timed ? Json(x) : Json(r.step));
    sy.push_back(opt(r.seconds, 1e4));
    loss.push_back(opt(r.loss, 1e4));
  }
  data["step_x"] = sx;
  data["step_seconds"] = sy;
  data["loss"] = loss;
  data["baseline"] = opt(d.baseline_seconds, 1e4);
  Json tx = Json::array(), temp = Json::array(), power = Json::array(), clock = Json::array(),
       avail = Json::array();
  if (thermal && timed) {
    for (const auto& s : thermal->samples) {
      widen(epoch_seconds(s.time));
      tx.push_back(epoch_seconds(s.time));
      temp.push_back(opt(s.gpu_temp_c));
      power.push_back(opt(s.power_w));
      clock.push_back(opt(s.sm_clock_mhz, 1));
      avail.push_back(s.mem_available_bytes
                          ? opt(*s.mem_available_bytes / (1024.0 * 1024.0 * 1024.0))
                          : Json(nullptr));
    }
  }
  data["thermal_x"] = tx;
  data["gpu_temp_c"] = temp;
  data["power_w"] = power;
  data["sm_clock_mhz"] = clock;
  data["mem_available_gib"] = avail;
  Json bands = Json::array();
  for (const auto& s : d.slowdowns) {
    Json b;
    if (timed) {
      if (!s.start_time || !s.end_time) continue;
      b["from"] = epoch_seconds(*s.start_time);
      b["to"] = epoch_seconds(*s.end_time);
    } else {
      b["from"] = s.start_step;
      b["to"] = s.end_step;
    }
    b["cause"] = std::string(diagnose::cause_name(s.cause));
    b["ratio"] = opt(s.ratio);
    b["label"] = fmt::format("steps {}-{}: {:.2f}x, {}", s.start_step, s.end_step, s.ratio,
                             diagnose::cause_name(s.cause));
    bands.push_back(b);
  }
  data["slowdowns"] = bands;
  Json marks = Json::array();
  for (const auto& p : d.pauses) {
    Json m;
    if (timed) {
      if (!p.time) continue;
      m["at"] = epoch_seconds(*p.time);
    } else {
      if (!p.step) continue;
      m["at"] = *p.step;
    }
    m["kind"] = std::string(trainlog::marker_kind_name(p.kind));
    m["duration"] = opt(p.duration_seconds);
    marks.push_back(m);
  }
  data["pauses"] = marks;
  data["throttle"] = (thermal && timed) ? throttle_bands(*thermal) : Json::array();
  data["x_range"] = (lo <= hi) ? Json::array({lo, hi}) : Json(nullptr);
  return data;
}

}  // namespace

std::string render_html_report(std::string_view log_name, const trainlog::StepSeries& series,
                               const diagnose::Diagnosis& diagnosis,
                               const diagnose::ThermalLog* thermal, const ReportOptions& options) {
  const Json summary = analysis_to_json(log_name, series, diagnosis, thermal);
  const Json data = chart_data(series, diagnosis, thermal, options);
  Json page;
  page["summary"] = summary;
  page["charts"] = data;
  const std::string json_text = page.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  std::string html;
  html.reserve(embedded::uplot_js.size() + json_text.size() + 16384);
  html += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  html += fmt::format("<title>sparkops analyze: {}</title>\n", html_escape(log_name));
  html += "<style>\n";
  html += embedded::uplot_css;
  html += "\n";
  html += embedded::report_css;
  html += "\n</style>\n</head>\n<body>\n";
  html += fmt::format("<header><h1>Training run analysis</h1><p class=\"log\">{}</p></header>\n",
                      html_escape(log_name));
  html += "<section id=\"summary\"></section>\n<section id=\"key\"></section>\n";
  html += "<section id=\"charts\"></section>\n<section id=\"events\"></section>\n";
  html += "<script id=\"sparkops-data\" type=\"application/json\">";
  html += script_safe(json_text);
  html += "</script>\n<script>\n";
  html += script_safe(embedded::uplot_js);
  html += "\n</script>\n<script>\n";
  html += script_safe(embedded::report_js);
  html += "\n</script>\n</body>\n</html>\n";
  return html;
}

}  // namespace sparkops::report

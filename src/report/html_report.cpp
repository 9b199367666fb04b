#include "report/html_report.hpp"

#include <chrono>
#include <cmath>

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

Json chart_data(const trainlog::StepSeries& series, const diagnose::Diagnosis& d,
                const diagnose::ThermalLog* thermal) {
  Json data;
  const bool timed = !series.steps.empty() && series.steps.front().time && series.steps.back().time;
  data["x_is_time"] = timed;
  Json sx = Json::array(), sy = Json::array();
  for (const auto& r : series.steps) {
    if (timed && !r.time) continue;
    sx.push_back(timed ? Json(epoch_seconds(*r.time)) : Json(r.step));
    sy.push_back(opt(r.seconds, 1e4));
  }
  data["step_x"] = sx;
  data["step_seconds"] = sy;
  data["baseline"] = opt(d.baseline_seconds, 1e4);
  Json tx = Json::array(), temp = Json::array(), power = Json::array(), clock = Json::array(),
       avail = Json::array();
  if (thermal && timed) {
    for (const auto& s : thermal->samples) {
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
  return data;
}

}  // namespace

std::string render_html_report(std::string_view log_name, const trainlog::StepSeries& series,
                               const diagnose::Diagnosis& diagnosis,
                               const diagnose::ThermalLog* thermal) {
  const Json summary = analysis_to_json(log_name, series, diagnosis, thermal);
  const Json data = chart_data(series, diagnosis, thermal);
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
  html += "<section id=\"summary\"></section>\n<section id=\"charts\"></section>\n";
  html += "<section id=\"events\"></section>\n";
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

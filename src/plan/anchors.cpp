#include "plan/anchors.hpp"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/json_text.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "models/catalogue.hpp"

namespace sparkops::embedded {
extern const std::string_view anchors_json;
}

namespace sparkops::plan {

namespace {

using nlohmann::json;

std::optional<std::uint64_t> opt_u64(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number_unsigned()) return std::nullopt;
  return it->get<std::uint64_t>();
}

Result<Anchor> anchor_from_json(const json& j, std::string_view where) {
  if (!j.is_object()) return fail(Errc::malformed, fmt::format("{}: not a JSON object", where));
  Anchor a;
  a.id = j.value("id", "");
  a.model = j.value("model", "");
  a.source = j.value("source", "");
  a.note = j.value("note", "");
  const auto method = j.find("method");
  if (method == j.end() || !method->is_string()) {
    return fail(Errc::malformed, fmt::format("{}: missing \"method\"", where));
  }
  auto m = parse_method(method->get<std::string>());
  if (!m) return fail(Errc::malformed, fmt::format("{}: {}", where, m.error().detail));
  a.method = *m;
  if (const auto p = opt_u64(j, "params")) {
    a.params = *p;
  } else if (const auto* e = a.model.empty() ? nullptr : models::find_in_catalogue(a.model)) {
    a.params = count_params(e->arch).total;
  } else {
    return fail(Errc::malformed,
                fmt::format("{}: missing \"params\" and \"model\" is not in the catalogue", where));
  }
  if (a.params == 0) return fail(Errc::malformed, fmt::format("{}: \"params\" is 0", where));
  a.kind = j.value("kind", std::string("measured_peak")) == "fits_ceiling"
               ? AnchorKind::fits_ceiling
               : AnchorKind::measured_peak;
  a.peak_pool_bytes = opt_u64(j, "peak_pool_bytes");
  a.peak_allocated_bytes = opt_u64(j, "peak_allocated_bytes");
  a.batch = opt_u64(j, "batch");
  a.seq = opt_u64(j, "seq");
  if (a.kind == AnchorKind::measured_peak && !a.peak_pool_bytes && !a.peak_allocated_bytes) {
    return fail(
        Errc::malformed,
        fmt::format("{}: measured anchor without \"peak_pool_bytes\" or \"peak_allocated_bytes\"",
                    where));
  }
  return a;
}

}  // namespace

Result<std::vector<Anchor>> parse_anchors_jsonl(std::string_view text, std::string_view source) {
  std::vector<Anchor> out;
  std::size_t line_no = 0;
  for (const auto raw : split_lines(text)) {
    ++line_no;
    const auto line = trim(raw);
    if (line.empty()) continue;
    const std::string where = fmt::format("{}:{}", source, line_no);
    const json j = json::parse(line.begin(), line.end(), nullptr, false);
    if (j.is_discarded()) return fail(Errc::malformed, fmt::format("{}: not valid JSON", where));
    auto a = anchor_from_json(j, where);
    if (!a) return tl::unexpected(a.error());
    if (a->source.empty()) a->source = "user";
    if (a->id.empty()) a->id = fmt::format("user-{}", line_no);
    out.push_back(std::move(*a));
  }
  return out;
}

Result<std::vector<Anchor>> parse_anchors_json(std::string_view text, std::string_view source) {
  const json root = json::parse(text.begin(), text.end(), nullptr, false);
  if (root.is_discarded() || !root.is_object() || !root.contains("anchors") ||
      !root["anchors"].is_array()) {
    return fail(Errc::malformed, fmt::format("{}: not an {{\"anchors\": [...]}} document", source));
  }
  std::vector<Anchor> out;
  std::size_t index = 0;
  for (const auto& j : root["anchors"]) {
    auto a = anchor_from_json(j, fmt::format("{}[{}]", source, index++));
    if (!a) return tl::unexpected(a.error());
    out.push_back(std::move(*a));
  }
  return out;
}

std::vector<Anchor> embedded_anchors() {
  auto parsed = parse_anchors_json(embedded::anchors_json, "data/anchors.json");
  // Compiled-in data; a failure is a build defect pinned by the anchor tests.
  if (!parsed) throw std::logic_error(parsed.error().detail);
  return std::move(*parsed);
}

std::string anchor_to_jsonl(const Anchor& a) {
  json j = json::object();
  if (!a.id.empty()) j["id"] = a.id;
  if (!a.model.empty()) j["model"] = a.model;
  j["params"] = a.params;
  j["method"] = std::string(method_name(a.method));
  j["kind"] = a.kind == AnchorKind::fits_ceiling ? "fits_ceiling" : "measured_peak";
  if (a.peak_pool_bytes) j["peak_pool_bytes"] = *a.peak_pool_bytes;
  if (a.peak_allocated_bytes) j["peak_allocated_bytes"] = *a.peak_allocated_bytes;
  if (a.batch) j["batch"] = *a.batch;
  if (a.seq) j["seq"] = *a.seq;
  if (!a.source.empty()) j["source"] = a.source;
  if (!a.note.empty()) j["note"] = a.note;
  return dump_json(j);
}

std::optional<AnchorMatch> nearest_anchor(const std::vector<Anchor>& anchors, std::uint64_t params,
                                          const RunConfig& run, const Estimate& estimate, bool fits,
                                          const Reestimate& reestimate) {
  const Anchor* best = nullptr;
  double best_score = 0;
  for (const auto& a : anchors) {
    const double distance =
        std::fabs(std::log(static_cast<double>(params) / static_cast<double>(a.params)));
    // A different method counts as one more factor e away, so a same-method anchor wins ties.
    const double score = distance + (a.method == run.method ? 0.0 : 1.0);
    if (best == nullptr || score < best_score) {
      best = &a;
      best_score = score;
    }
  }
  if (best == nullptr) return std::nullopt;
  AnchorMatch m;
  m.anchor = *best;
  m.params_ratio = static_cast<double>(params) / static_cast<double>(best->params);
  const bool same_class =
      best->method == run.method && m.params_ratio <= 1.5 && m.params_ratio >= 1.0 / 1.5;
  const bool allocated = best->peak_allocated_bytes.has_value();
  const std::optional<std::uint64_t> anchor_peak =
      allocated ? best->peak_allocated_bytes : best->peak_pool_bytes;
  if (best->kind == AnchorKind::measured_peak && anchor_peak && *anchor_peak > 0) {
    auto peak_of = [&](const Estimate& e) {
      const std::uint64_t mine = allocated ? e.train_peak_allocated_bytes : e.peak_pool_bytes();
      return static_cast<double>(mine) / static_cast<double>(*anchor_peak);
    };
    m.estimate_ratio = peak_of(estimate);
    RunConfig at = run;
    if (best->batch) at.batch = *best->batch;
    if (best->seq) at.seq = *best->seq;
    const bool differs = at.batch != run.batch || at.seq != run.seq;
    // An allocated peak does not depend on the caching allocator's reserve: skip its replay.
    if (allocated) at.reserve_fraction_hint = 0;
    if (differs && reestimate) {
      m.run_ratio = m.estimate_ratio;
      m.estimate_ratio = peak_of(reestimate(at));
      m.compared_batch = at.batch;
      m.compared_seq = at.seq;
    }
    m.far = same_class && std::fabs(*m.estimate_ratio - 1.0) > 0.25;
    m.message = fmt::format("{} ({}): {} {} ≈ {} {}", best->id, best->source, best->model,
                            method_name(best->method), format_bytes(*anchor_peak),
                            allocated ? "allocated" : "pool");
    if (m.run_ratio) {
      m.message += fmt::format(
          " at batch {} × seq {}; this run at that batch and seq is {:.0f}% of it (as planned, "
          "batch {} × seq {}: {:.0f}%)",
          at.batch, at.seq, *m.estimate_ratio * 100.0, run.batch, run.seq, *m.run_ratio * 100.0);
    } else {
      m.message += fmt::format("; this estimate is {:.0f}% of it", *m.estimate_ratio * 100.0);
    }
  } else {
    const bool within = !best->seq || run.seq <= *best->seq;
    m.far = same_class && within && !fits;
    m.message = fmt::format("{} ({}): {}", best->id, best->source, best->note);
  }
  if (m.far) m.message += " — far from this anchor: recheck dtype and method";
  return m;
}

}  // namespace sparkops::plan

// libFuzzer target: the text writers every hostile name reaches (base/utf8.hpp rule, JSON via
// dump_json, Prometheus label values and HELP). Arbitrary bytes in, and each writer must produce
// well-formed UTF-8 that reads back to the sanitized text; any violation aborts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/json_text.hpp"
#include "base/utf8.hpp"
#include "exporter/prom_text.hpp"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

// Inverse of escape_label_value (\\, \", \n) for the round trip.
std::string unescape_label(std::string_view v) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] == '\\' && i + 1 < v.size()) {
      ++i;
      out += v[i] == 'n' ? '\n' : v[i];
    } else {
      out += v[i];
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sparkops;
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  const std::string clean = sanitize_utf8(text);
  check(is_valid_utf8(clean));
  check(sanitize_utf8(clean) == clean);
  if (is_valid_utf8(text)) check(clean == text);

  const std::string term = terminal_text(text);
  check(is_valid_utf8(term));
  for (const char c : term) {
    const auto b = static_cast<unsigned char>(c);
    check(b >= 0x20 || b == '\n' || b == '\t');
    check(b != 0x7F);
  }

  for (const std::size_t cut : {std::size_t{0}, size / 2, size}) {
    const std::string_view prefix = utf8_prefix(clean, cut);
    check(prefix.size() <= cut && is_valid_utf8(prefix));
  }

  // JSON: never throws, always well-formed, and reads back to the sanitized text.
  nlohmann::json doc = {{"comm", std::string(text)}, {"argv", {std::string(text), "x"}}};
  const std::string json = dump_json(doc, 2);
  check(is_valid_utf8(json));
  check(json == nlohmann::json({{"comm", clean}, {"argv", {clean, "x"}}}).dump(2));
  check(nlohmann::json::parse(json)["comm"].get<std::string>() == clean);
  check(dump_json(nlohmann::ordered_json(std::string(text))) == nlohmann::json(clean).dump());

  // Prometheus: one HELP, one TYPE and one sample line whatever the bytes; the label value
  // unescapes to the sanitized text.
  exporter::MetricFamily family{
      "sparkops_fuzz",
      exporter::MetricType::gauge,
      std::string(text),
      {exporter::MetricSample{{exporter::Label{"name", std::string(text)}}, 1}}};
  const std::string expo = exporter::render_exposition({family});
  check(is_valid_utf8(expo));
  std::size_t lines = 0;
  for (const char c : expo) lines += c == '\n' ? 1 : 0;
  check(lines == 3);
  const std::string_view sample_line =
      std::string_view(expo).substr(expo.find("\nsparkops_fuzz{") + 1);
  constexpr std::string_view kOpen = "sparkops_fuzz{name=\"";
  check(sample_line.substr(0, kOpen.size()) == kOpen);
  const std::size_t close = sample_line.rfind("\"} 1\n");
  check(close != std::string_view::npos && close >= kOpen.size());
  check(unescape_label(sample_line.substr(kOpen.size(), close - kOpen.size())) == clean);
  return 0;
}

#include "trainlog/tqdm_scan.hpp"

#include <charconv>

#include "base/text.hpp"
#include "trainlog/log_text.hpp"

namespace sparkops::trainlog {

namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Digits ending at `end` (exclusive); returns their start or npos.
std::size_t digits_before(std::string_view s, std::size_t end) {
  std::size_t b = end;
  while (b > 0 && is_digit(s[b - 1])) --b;
  return b == end ? std::string_view::npos : b;
}

std::optional<std::int64_t> to_int(std::string_view s) {
  std::int64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// "21.99s/it" -> 21.99; "4.50it/s" -> 0.222; "1.2kit/s" -> 1/1200. nullopt for "?it/s" and for
// non-iteration units. `ok` is false when the unit is not iterations at all.
std::optional<double> parse_rate(std::string_view text, bool& ok) {
  std::string_view r = trim(text);
  ok = true;
  if (ends_with(r, "s/it")) {
    const auto v = parse_double(r.substr(0, r.size() - 4));
    if (!v || *v <= 0) return std::nullopt;
    return *v;
  }
  if (ends_with(r, "it/s")) {
    std::string_view num = r.substr(0, r.size() - 4);
    double scale = 1;
    if (!num.empty() && (num.back() == 'k' || num.back() == 'M')) {
      scale = num.back() == 'k' ? 1e3 : 1e6;
      num.remove_suffix(1);
    }
    const auto v = parse_double(num);
    if (!v || *v <= 0) return std::nullopt;
    return 1.0 / (*v * scale);
  }
  ok = false;
  return std::nullopt;
}

}  // namespace

void scan_tqdm(std::string_view line, std::vector<TqdmUpdate>& out) {
  out.clear();
  std::size_t segment_start = 0;
  std::size_t pos = 0;
  while (pos < line.size()) {
    const std::size_t open = line.find('[', pos);
    if (open == std::string_view::npos) return;
    pos = open + 1;
    std::size_t e = open;
    while (e > segment_start && line[e - 1] == ' ') --e;
    TqdmUpdate u;
    std::size_t n_start = std::string_view::npos;
    if (e >= 2 && line[e - 1] == 't' && line[e - 2] == 'i') {
      n_start = digits_before(line, e - 2);
      if (n_start == std::string_view::npos) continue;
      const auto n = to_int(line.substr(n_start, e - 2 - n_start));
      if (!n) continue;
      u.n = *n;
    } else {
      const std::size_t t_start = digits_before(line, e);
      if (t_start == std::string_view::npos || t_start == 0 || line[t_start - 1] != '/') continue;
      n_start = digits_before(line, t_start - 1);
      if (n_start == std::string_view::npos) continue;
      const auto n = to_int(line.substr(n_start, t_start - 1 - n_start));
      const auto total = to_int(line.substr(t_start, e - t_start));
      if (!n || !total) continue;
      u.n = *n;
      u.total = *total;
    }
    const std::size_t close = line.find(']', open);
    if (close == std::string_view::npos) return;
    const std::string_view inner = line.substr(open + 1, close - open - 1);
    // elapsed ends at '<' (with a total) or ','.
    const std::size_t elapsed_end = inner.find_first_of("<,");
    if (elapsed_end == std::string_view::npos) continue;
    const auto elapsed = parse_clock_seconds(inner.substr(0, elapsed_end));
    if (!elapsed) continue;
    const std::size_t rate_start = inner.find(',', elapsed_end);
    if (rate_start == std::string_view::npos) continue;
    std::string_view rest = inner.substr(rate_start + 1);
    const std::size_t rate_end = rest.find(',');
    bool unit_ok = false;
    u.seconds_per_it = parse_rate(rest.substr(0, rate_end), unit_ok);
    if (!unit_ok) continue;
    u.postfix =
        rate_end == std::string_view::npos ? std::string_view{} : trim(rest.substr(rate_end + 1));
    u.elapsed_seconds = *elapsed;
    // desc: between the previous update (or line start) and the percentage before "%|".
    std::string_view before = line.substr(segment_start, n_start - segment_start);
    std::size_t desc_end = before.size();
    if (const auto pct = before.rfind("%|"); pct != std::string_view::npos) {
      desc_end = pct;
      while (desc_end > 0 && (is_digit(before[desc_end - 1]) || before[desc_end - 1] == '.'))
        --desc_end;
    }
    std::string_view desc = trim(before.substr(0, desc_end));
    if (!desc.empty() && desc.back() == ':') desc = trim(desc.substr(0, desc.size() - 1));
    u.desc = desc;
    u.begin = segment_start;
    u.end = close + 1;
    out.push_back(u);
    segment_start = close + 1;
    pos = close + 1;
  }
}

}  // namespace sparkops::trainlog

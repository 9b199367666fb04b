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

// `s` is a run of digits (digits_before found it): up to 18 of them cannot overflow int64.
std::optional<std::int64_t> to_int(std::string_view s) {
  if (s.size() <= 18) {
    std::int64_t d = 0;
    for (const char c : s) d = d * 10 + (c - '0');
    return d;
  }
  std::int64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// "21.99s/it" -> 21.99; "4.50it/s" -> 0.222; "1.2kit/s" -> 1/1200. nullopt for "?it/s" and for
// non-iteration units. `ok` is false when the unit is not iterations at all.
std::optional<double> parse_rate(std::string_view text, bool& ok, bool& inverted) {
  inverted = false;
  std::string_view r = trim(text);
  ok = true;
  if (ends_with(r, "s/it")) {
    const auto v = parse_decimal(r.substr(0, r.size() - 4));
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
    inverted = true;
    const auto v = parse_decimal(num);
    if (!v || *v <= 0) return std::nullopt;
    return 1.0 / (*v * scale);
  }
  ok = false;
  return std::nullopt;
}

}  // namespace

namespace {

enum class UpdateAt { found, not_here, stop };

// The update whose bracket opens at `open` (its counters end just before it, after
// `segment_start`): every field but desc and begin. not_here when the text there is not an
// iteration update (the scan goes on with the next '['), stop when no ']' follows.
UpdateAt parse_update_at(std::string_view line, std::size_t segment_start, std::size_t open,
                         TqdmUpdate& u) {
  u = TqdmUpdate{};
  std::size_t e = open;
  while (e > segment_start && line[e - 1] == ' ') --e;
  std::size_t n_start = std::string_view::npos;
  if (e >= 2 && line[e - 1] == 't' && line[e - 2] == 'i') {
    n_start = digits_before(line, e - 2);
    if (n_start == std::string_view::npos) return UpdateAt::not_here;
    const auto n = to_int(line.substr(n_start, e - 2 - n_start));
    if (!n) return UpdateAt::not_here;
    u.n = *n;
  } else {
    const std::size_t t_start = digits_before(line, e);
    if (t_start == std::string_view::npos || t_start == 0 || line[t_start - 1] != '/')
      return UpdateAt::not_here;
    n_start = digits_before(line, t_start - 1);
    if (n_start == std::string_view::npos) return UpdateAt::not_here;
    const auto n = to_int(line.substr(n_start, t_start - 1 - n_start));
    const auto total = to_int(line.substr(t_start, e - t_start));
    if (!n || !total) return UpdateAt::not_here;
    u.n = *n;
    u.total = *total;
  }
  const std::size_t close = line.find(']', open);
  if (close == std::string_view::npos) return UpdateAt::stop;
  const std::string_view inner = line.substr(open + 1, close - open - 1);
  // elapsed ends at '<' (with a total) or ','.
  std::size_t elapsed_end = 0;
  while (elapsed_end < inner.size() && inner[elapsed_end] != '<' && inner[elapsed_end] != ',')
    ++elapsed_end;
  if (elapsed_end == inner.size()) return UpdateAt::not_here;
  const auto elapsed = parse_clock_seconds(inner.substr(0, elapsed_end));
  if (!elapsed) return UpdateAt::not_here;
  const std::size_t rate_start = inner.find(',', elapsed_end);
  if (rate_start == std::string_view::npos) {
    // "[00:12<00:30]": a bar_format without rate or postfix; needs the remaining time.
    const std::string_view remaining = trim(inner.substr(elapsed_end + 1));
    if (inner[elapsed_end] != '<' || !u.total ||
        (remaining != "?" && !parse_clock_seconds(remaining)))
      return UpdateAt::not_here;
    u.postfix = {};
  } else {
    std::string_view rest = inner.substr(rate_start + 1);
    const std::size_t rate_end = rest.find(',');
    const std::string_view rate_field = rest.substr(0, rate_end);
    bool unit_ok = false;
    u.seconds_per_it = parse_rate(rate_field, unit_ok, u.rate_inverted);
    if (unit_ok) {
      u.postfix =
          rate_end == std::string_view::npos ? std::string_view{} : trim(rest.substr(rate_end + 1));
    } else if (u.total && inner[elapsed_end] == '<' &&
               rate_field.find('=') != std::string_view::npos) {
      // NeMo / Lightning bar_format without the rate: the postfix follows the remaining time.
      u.postfix = trim(rest);
    } else {
      return UpdateAt::not_here;
    }
  }
  u.elapsed_seconds = *elapsed;
  u.n_begin = n_start;
  u.end = close + 1;
  return UpdateAt::found;
}

// desc: between the previous update (or the record's start) and the percentage before "%|".
std::string_view update_desc(std::string_view line, std::size_t segment_start,
                             std::size_t n_start) {
  std::string_view before = line.substr(segment_start, n_start - segment_start);
  std::size_t desc_end = before.size();
  if (const auto pct = before.rfind("%|"); pct != std::string_view::npos) {
    desc_end = pct;
    while (desc_end > 0 && (is_digit(before[desc_end - 1]) || before[desc_end - 1] == '.'))
      --desc_end;
  }
  std::string_view desc = trim(before.substr(0, desc_end));
  if (!desc.empty() && desc.back() == ':') desc = trim(desc.substr(0, desc.size() - 1));
  return desc;
}

}  // namespace

void scan_tqdm(std::string_view line, std::vector<TqdmUpdate>& out) {
  out.clear();
  std::size_t segment_start = 0;
  std::size_t pos = 0;
  TqdmUpdate u;
  while (pos < line.size()) {
    const std::size_t open = line.find('[', pos);
    if (open == std::string_view::npos) return;
    pos = open + 1;
    const UpdateAt at = parse_update_at(line, segment_start, open, u);
    if (at == UpdateAt::stop) return;
    if (at == UpdateAt::not_here) continue;
    u.desc = update_desc(line, segment_start, u.n_begin);
    u.begin = segment_start;
    out.push_back(u);
    segment_start = u.end;
    pos = u.end;
  }
}

bool scan_tqdm_redraw(std::string_view line, std::size_t prefix_len, TqdmUpdate& u) {
  if (prefix_len >= line.size() || !is_digit(line[prefix_len])) return false;
  // The prefix holds no '[' (the caller's promise), so this is the first one scan_tqdm tries.
  const std::size_t open = line.find('[', prefix_len);
  if (open == std::string_view::npos) return false;
  if (parse_update_at(line, 0, open, u) != UpdateAt::found) return false;
  // One update that ends the record, counted from where the prefix ends: scan_tqdm's whole answer.
  return u.n_begin == prefix_len && u.end == line.size();
}

BarRole classify_bar(std::string_view desc) {
  // Leading terminal residue ("[A", "^M") left by pasted logs is not part of the description.
  const std::size_t letter = desc.find_first_not_of("[A^M \x1b");
  const std::string_view d =
      letter == std::string_view::npos ? std::string_view{} : desc.substr(letter);
  if (d.empty()) return BarRole::candidate;
  if (d.find("|Loss: ") != std::string_view::npos) return BarRole::candidate;  // torchtune
  // Evaluation loops: HF/Lightning "Validation", "Validation DataLoader 0", "Testing",
  // "Predicting", "Sanity Checking", ms-swift "Val", MLX-LM "Calculating loss...", "Evaluating".
  constexpr std::string_view kEval[] = {"Val",
                                        "val",
                                        "Evaluat",
                                        "evaluat",
                                        "Eval",
                                        "eval",
                                        "Test",
                                        "test",
                                        "Predict",
                                        "predict",
                                        "Sanity",
                                        "Calculating loss",
                                        "Generating samples"};
  for (const auto p : kEval) {
    if (starts_with(d, p)) return BarRole::eval;
  }
  // Start-up and data work that draws bars in training logs (transformers' "Loading checkpoint
  // shards" / "Loading weights", datasets' "Map", "Filter", "Generating train split", "Running
  // tokenizer on dataset", huggingface_hub "Downloading"/"Fetching N files", vLLM "Capturing CUDA
  // graphs", TRL "Tokenizing"/"Packing", ...).
  constexpr std::string_view kStartup[] = {
      "Loading",   "loading",   "Map",        "map",        "Tokeniz",    "tokeniz",  "Running tok",
      "Filter",    "filter",    "Generating", "Download",   "download",   "Fetching", "Convert",
      "Process",   "process",   "Grouping",   "Packing",    "packing",    "Casting",  "Saving",
      "saving",    "Capturing", "Preprocess", "preprocess", "Shuffl",     "Extract",  "Resolving",
      "Computing", "Applying",  "Preparing",  "Creating",   "Writing",    "Reading",  "Upload",
      "Compil",    "Quantiz",   "Merging",    "Building",   "Concatenat", "Adding",   "Truncat"};
  for (const auto p : kStartup) {
    if (starts_with(d, p)) return BarRole::other;
  }
  return BarRole::candidate;
}

std::optional<std::int64_t> trainer_banner_total(std::string_view line) {
  const auto at = line.find("Total optimization steps =");
  if (at == std::string_view::npos) return std::nullopt;
  std::int64_t v = 0;
  bool any = false;
  for (std::size_t p = at + 26; p < line.size(); ++p) {
    const char c = line[p];
    if (c == ' ' && !any) continue;
    if (c == ',') continue;
    if (c < '0' || c > '9') break;
    v = v * 10 + (c - '0');
    any = true;
    if (v > (std::int64_t{1} << 50)) return std::nullopt;
  }
  return any ? std::optional<std::int64_t>(v) : std::nullopt;
}

bool prefer_training_bar(const BarStanding& a, const BarStanding& b,
                         std::optional<std::int64_t> banner_total) {
  const bool a_banner = banner_total && a.total == banner_total;
  const bool b_banner = banner_total && b.total == banner_total;
  if (a_banner != b_banner) return a_banner;
  if (a.advances != b.advances) return a.advances > b.advances;
  return a.total.value_or(0) > b.total.value_or(0);
}

}  // namespace sparkops::trainlog

#include "trainlog/tqdm_scan.hpp"

#include <bit>
#include <charconv>
#include <cstring>

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

namespace {

constexpr double kPow10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                             1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
constexpr std::int64_t kPow10Int[] = {1,
                                      10,
                                      100,
                                      1000,
                                      10000,
                                      100000,
                                      1000000,
                                      10000000,
                                      100000000,
                                      1000000000,
                                      10000000000,
                                      100000000000,
                                      1000000000000,
                                      10000000000000,
                                      100000000000000,
                                      1000000000000000};

// Eight bytes at a time (SWAR) where eight are left: a redraw is mostly digit runs, and a loop per
// byte costs ~15 instructions per digit where a word costs ~35 for up to eight. Little-endian
// machines only (x86-64, AArch64): the first byte is the word's lowest; others take the byte loop.
constexpr bool kSwar = std::endian::native == std::endian::little;
constexpr std::uint64_t kOnes = 0x0101010101010101;
constexpr std::uint64_t kHighs = 0x8080808080808080;

std::uint64_t load8(const char* p) {
  std::uint64_t w = 0;
  std::memcpy(&w, p, sizeof w);
  return w;
}

// How many of the word's first bytes are digits, given x = word ^ '0' in every byte: a byte is a
// digit when x < 10, i.e. neither its top bit nor the top bit of (x & 0x7f) + 0x76 is set (that
// sum stays below 0x100, so no carry reaches the next byte).
[[gnu::always_inline]] inline int digit_run(std::uint64_t x) {
  const std::uint64_t not_digit = (((x & ~kHighs) + kOnes * 0x76) | x) & kHighs;
  return not_digit == 0 ? 8 : std::countr_zero(not_digit) / 8;
}

// The value of eight digit values (0-9, the first in the lowest byte): pairs, then quads, then
// the whole (fast_float's multiply-shift reduction of eight ASCII digits, after the '0's are gone).
[[gnu::always_inline]] inline std::int64_t eight_digits(std::uint64_t x) {
  constexpr std::uint64_t kMask = 0x000000FF000000FF;
  constexpr std::uint64_t kMul1 = 100 + (1000000ULL << 32);
  constexpr std::uint64_t kMul2 = 1 + (10000ULL << 32);
  x = x * 10 + (x >> 8);
  return static_cast<std::uint32_t>((((x & kMask) * kMul1) + (((x >> 16) & kMask) * kMul2)) >> 32);
}

// A run of 1 to `max_digits` (at most 18) digits at p, which moves past it, as an integer; false
// for none or more (the general parse decides those).
[[gnu::always_inline]] inline bool read_digits(const char*& p, const char* end, int max_digits,
                                             std::int64_t& v) {
  const char* const b = p;
  std::int64_t acc = 0;
  if constexpr (kSwar) {
    while (end - p >= 8) {
      const std::uint64_t x = load8(p) ^ (kOnes * '0');
      const int k = digit_run(x);
      if (k == 0) break;
      if ((p - b) + k > max_digits) return false;
      // Shifted up, the k digits follow 8 - k zero bytes: leading zeros, the same value.
      acc = acc * kPow10Int[k] + eight_digits(x << (8 * (8 - k)));
      p += k;
      if (k < 8) {
        v = acc;
        return true;
      }
    }
  }
  while (p < end && is_digit(*p)) {
    if (p - b == max_digits) return false;
    acc = acc * 10 + (*p - '0');
    ++p;
  }
  if (p == b) return false;
  v = acc;
  return true;
}

// The first ',' or ']' at or after p, or end.
const char* find_comma_or_close(const char* p, const char* end) {
  if constexpr (kSwar) {
    for (; end - p >= 8; p += 8) {
      const std::uint64_t w = load8(p);
      const std::uint64_t c = w ^ (kOnes * ',');
      const std::uint64_t b = w ^ (kOnes * ']');
      // A zero byte of c or b is a match; the lowest flagged byte is always a true one.
      const std::uint64_t hit = (((c - kOnes) & ~c) | ((b - kOnes) & ~b)) & kHighs;
      if (hit != 0) return p + std::countr_zero(hit) / 8;
    }
  }
  while (p < end && *p != ',' && *p != ']') ++p;
  return p;
}

// tqdm's format_interval ("MM:SS", "H:MM:SS") at p: whole_clock_seconds' rule (2 or 3 fields of
// 1-9 digits) and value, read in the same pass that finds where the field ends.
[[gnu::always_inline]] inline bool read_clock(const char*& p, const char* end, double& seconds) {
  std::int64_t total = 0, field = 0;
  if (!read_digits(p, end, 9, field)) return false;
  // format_interval pads minutes and seconds to two digits: ":MM:SS" or ":SS" after the first
  // field, read without a loop (the loop below gives the same value, and decides the rest).
  if (end - p >= 7 && p[0] == ':' && is_digit(p[1]) && is_digit(p[2])) {
    const std::int64_t second = (p[1] - '0') * 10 + (p[2] - '0');
    if (p[3] == ':' && is_digit(p[4]) && is_digit(p[5]) && !is_digit(p[6]) && p[6] != ':') {
      seconds = static_cast<double>((field * 60 + second) * 60 + (p[4] - '0') * 10 + (p[5] - '0'));
      p += 6;
      return true;
    }
    if (!is_digit(p[3]) && p[3] != ':') {
      seconds = static_cast<double>(field * 60 + second);
      p += 3;
      return true;
    }
  }
  int fields = 1;
  while (p < end && *p == ':' && fields < 3) {
    ++p;
    total = total * 60 + field;
    if (!read_digits(p, end, 9, field)) return false;
    ++fields;
  }
  if (fields < 2 || (p < end && *p == ':')) return false;
  seconds = static_cast<double>(total * 60 + field);
  return true;
}

}  // namespace

bool scan_tqdm_redraw_fast(std::string_view line, std::size_t prefix_len, TqdmUpdate& u) {
  // tqdm's r_bar (tqdm/std.py format_meter): "{n}/{total} [{elapsed}<{remaining}, {rate}{postfix}]"
  // or, without a total, "{n}it [{elapsed}, {rate}{postfix}]"; rate "{x:5.2f}s/it", "{x:5.2f}it/s"
  // (format_sizeof's "1.23kit/s" with unit_scale) or "?it/s"; postfix ", k=v, ...".
  if (prefix_len >= line.size() || (prefix_len > 0 && is_digit(line[prefix_len - 1])))
    return false;
  const char* const begin = line.data();
  const char* const end = begin + line.size();
  const char* p = begin + prefix_len;
  u = TqdmUpdate{};
  // n, then "/total" or "it", then spaces and '[': the first '[' after the prefix (no other bytes).
  if (!read_digits(p, end, 18, u.n) || p == end) return false;
  if (*p == '/') {
    ++p;
    std::int64_t total = 0;
    if (!read_digits(p, end, 18, total)) return false;
    u.total = total;
  } else if (end - p >= 2 && p[0] == 'i' && p[1] == 't') {
    p += 2;
  } else {
    return false;
  }
  while (p < end && *p == ' ') ++p;
  if (p == end || *p != '[') return false;
  ++p;
  if (!read_clock(p, end, u.elapsed_seconds) || p == end) return false;
  if (*p == '<') {
    // The remaining time: scan_tqdm reads it only when no rate follows ("[00:12<00:30]").
    ++p;
    const char* const remaining = p;
    p = find_comma_or_close(p, end);
    if (p == end) return false;
    if (*p == ']') {
      double unused = 0;
      const char* r = remaining;
      const bool clock = read_clock(r, p, unused) && r == p;
      const bool unknown = p - remaining == 1 && *remaining == '?';
      if (!u.total || !(clock || unknown) || p + 1 != end) return false;
      u.n_begin = prefix_len;
      u.end = line.size();
      return true;
    }
  } else if (*p != ',') {
    return false;
  }
  ++p;  // the ',' before the rate
  while (p < end && *p == ' ') ++p;
  // The rate: "?" or a plain decimal of at most 15 digits with digits after any point, exactly
  // parse_decimal's fast path (m / 10^k), then the unit; anything else goes to the general parse.
  bool known = false;
  double value = 0;
  if (p < end && *p == '?') {
    ++p;
  } else {
    std::int64_t whole = 0, frac = 0;
    const char* const digits = p;
    if (!read_digits(p, end, 15, whole)) return false;
    int frac_digits = 0;
    if (p < end && *p == '.') {
      const char* const point = ++p;
      if (!read_digits(p, end, 15 - static_cast<int>(point - 1 - digits), frac)) return false;
      frac_digits = static_cast<int>(p - point);
    }
    // Every digit as one integer m below 10^15, exact in a double, as parse_decimal reads it.
    const std::uint64_t m =
        static_cast<std::uint64_t>(whole) * static_cast<std::uint64_t>(kPow10Int[frac_digits]) +
        static_cast<std::uint64_t>(frac);
    known = m > 0;  // parse_rate: a rate of 0 is no rate
    value = static_cast<double>(m);
    if (frac_digits > 0) value /= kPow10[frac_digits];
  }
  double scale = 1;
  if (p < end && (*p == 'k' || *p == 'M')) {
    scale = *p == 'k' ? 1e3 : 1e6;
    ++p;
  }
  if (end - p < 5) return false;  // the unit and at least the closing ']'
  if (p[0] == 's' && p[1] == '/' && p[2] == 'i' && p[3] == 't' && scale == 1) {
    if (known) u.seconds_per_it = value;
  } else if (p[0] == 'i' && p[1] == 't' && p[2] == '/' && p[3] == 's') {
    u.rate_inverted = true;
    if (known) u.seconds_per_it = 1.0 / (value * scale);
  } else {
    return false;
  }
  p += 4;
  if (*p == ',') {
    // The postfix runs to the first ']', which must end the record.
    const auto* close = static_cast<const char*>(std::memchr(p + 1, ']', end - p - 1));
    if (close == nullptr || close + 1 != end) return false;
    u.postfix = trim(std::string_view(p + 1, close - p - 1));
  } else if (*p != ']' || p + 1 != end) {
    return false;
  }
  u.n_begin = prefix_len;
  u.end = line.size();
  return true;
}

bool scan_tqdm_redraw(std::string_view line, std::size_t prefix_len, TqdmUpdate& u) {
  if (scan_tqdm_redraw_fast(line, prefix_len, u)) return true;
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

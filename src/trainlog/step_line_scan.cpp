#include "trainlog/step_line_scan.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <span>

#include "trainlog/log_text.hpp"

namespace sparkops::trainlog {

namespace {

constexpr auto npos = std::string_view::npos;

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool is_word_char(char c) {
  return is_alpha(c) || is_digit(c) || c == '_';
}

char lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

// `s` at `at` spells `word` (lower case), in any case.
bool spells_at(std::string_view s, std::size_t at, std::string_view word) {
  if (at + word.size() > s.size()) return false;
  for (std::size_t i = 0; i < word.size(); ++i) {
    if (lower(s[at + i]) != word[i]) return false;
  }
  return true;
}

// What may stand right before a field name: the start, a space or a separator the loops print
// ("| dt:", ", time=", "(took", "[step"). Not '/', '_', '-' or '.', which join a longer name
// ("time/step", "warmup_steps", "log-step").
bool opens_field(std::string_view s, std::size_t at) {
  if (at == 0) return true;
  const char c = s[at - 1];
  return c == ' ' || c == '\t' || c == '|' || c == ',' || c == ';' || c == '(' || c == '[' ||
         c == '{';
}

std::size_t skip_spaces(std::string_view s, std::size_t p) {
  while (p < s.size() && (s[p] == ' ' || s[p] == '\t')) ++p;
  return p;
}

// The copy of `line` without ANSI CSI sequences (ESC '[' parameters final-byte: the colours
// torchtitan and loguru print), or `line` itself when it has none.
std::string_view without_colour(std::string_view line, std::string& scratch) {
  if (line.find('\x1b') == npos) return line;
  scratch.clear();
  for (std::size_t p = 0; p < line.size(); ++p) {
    if (line[p] != '\x1b') {
      scratch.push_back(line[p]);
      continue;
    }
    if (p + 1 < line.size() && line[p + 1] == '[') {
      p += 2;
      while (p < line.size() && !(line[p] >= '@' && line[p] <= '~')) ++p;
    }
  }
  return scratch;
}

// A non-negative decimal at `p` ("1250.00", "3", "1.2e-3"); `end` receives the offset after it.
std::optional<double> number_at(std::string_view s, std::size_t p, std::size_t& end) {
  std::size_t q = p;
  while (q < s.size() && is_digit(s[q])) ++q;
  if (q == p) return std::nullopt;
  if (q + 1 < s.size() && s[q] == '.' && is_digit(s[q + 1])) {
    ++q;
    while (q < s.size() && is_digit(s[q])) ++q;
  }
  if (q + 1 < s.size() && (s[q] == 'e' || s[q] == 'E')) {
    std::size_t e = q + 1;
    if (e < s.size() && (s[e] == '+' || s[e] == '-')) ++e;
    if (e < s.size() && is_digit(s[e])) {
      while (e < s.size() && is_digit(s[e])) ++e;
      q = e;
    }
  }
  const auto v = parse_decimal(s.substr(p, q - p));
  if (!v || !std::isfinite(*v)) return std::nullopt;
  end = q;
  return v;
}

// A time unit at `p` (one space allowed before it) as seconds per unit; `end` receives the offset
// after it. The unit ends where the word does: "12 steps" has none.
std::optional<double> unit_at(std::string_view s, std::size_t p, std::size_t& end) {
  if (p < s.size() && s[p] == ' ') ++p;
  struct Unit {
    std::string_view text;
    double seconds;
  };
  static constexpr std::array<Unit, 8> kUnits = {{{"seconds", 1.0},
                                                  {"secs", 1.0},
                                                  {"sec", 1.0},
                                                  {"min", 60.0},
                                                  {"ms", 1e-3},
                                                  {"us", 1e-6},
                                                  {"\xc2\xb5s", 1e-6},
                                                  {"s", 1.0}}};
  for (const auto& u : kUnits) {
    if (s.substr(p, u.text.size()) != u.text) continue;
    const std::size_t after = p + u.text.size();
    if (after < s.size() && is_alpha(s[after])) continue;
    end = after;
    return u.seconds;
  }
  return std::nullopt;
}

bool plausible(double seconds) {
  return seconds > 0 && seconds < 1e7;
}

// The word (letters and '_') that ends right before `at`, spaces between; "" when none does.
std::string_view word_before(std::string_view s, std::size_t at) {
  std::size_t end = at;
  while (end > 0 && s[end - 1] == ' ') --end;
  std::size_t start = end;
  while (start > 0 && (is_alpha(s[start - 1]) || s[start - 1] == '_')) --start;
  return s.substr(start, end - start);
}

// A step word after "at", "from", "to", ... is a sentence about a step ("Training starts at step
// 1", "Saving checkpoint at step 500", "Resuming from step 200"), not a step's report.
bool follows_preposition(std::string_view s, std::size_t at) {
  static constexpr std::array<std::string_view, 11> kWords = {
      "at", "from", "to", "until", "after", "before", "of", "for", "since", "in", "on"};
  const std::string_view before = word_before(s, at);
  for (const auto word : kWords) {
    if (word.size() == before.size() && spells_at(before, 0, word)) return true;
  }
  return false;
}

bool find_step_word(std::string_view s, std::span<const std::string_view> words, StepLineScan& out,
                    std::size_t& word_at);

// The step counter: the first step word, as a word, followed by ':', '=', '#' or spaces and an
// integer (not a decimal), "/total" optional.
bool find_step(std::string_view s, StepLineScan& out, std::size_t& word_at) {
  // The global counter first: NeMo 2 prints "iteration 45/99 | ... | global_step: 45", where the
  // iteration counts within the epoch.
  static constexpr std::array<std::string_view, 2> kGlobal = {"global_step", "global step"};
  static constexpr std::array<std::string_view, 3> kLocal = {"iteration", "step", "iter"};
  for (const auto& words :
       {std::span<const std::string_view>(kGlobal), std::span<const std::string_view>(kLocal)}) {
    if (find_step_word(s, words, out, word_at)) return true;
  }
  return false;
}

bool find_step_word(std::string_view s, std::span<const std::string_view> words, StepLineScan& out,
                    std::size_t& word_at) {
  for (std::size_t p = 0; p < s.size(); ++p) {
    const char c = lower(s[p]);
    if ((c != 's' && c != 'i' && c != 'g') || !opens_field(s, p) || follows_preposition(s, p))
      continue;
    for (const auto word : words) {
      if (!spells_at(s, p, word)) continue;
      std::size_t q = p + word.size();
      if (q < s.size() && is_word_char(s[q])) continue;  // "steps", "step_avg", "iterations"
      q = skip_spaces(s, q);
      if (q < s.size() && (s[q] == ':' || s[q] == '=' || s[q] == '#')) q = skip_spaces(s, q + 1);
      std::size_t digits_end = q;
      while (digits_end < s.size() && is_digit(s[digits_end])) ++digits_end;
      if (digits_end == q || digits_end - q > 18) continue;
      if (digits_end < s.size() && (s[digits_end] == '.' || is_alpha(s[digits_end]))) continue;
      std::int64_t step = 0;
      std::from_chars(s.data() + q, s.data() + digits_end, step);
      out.step = step;
      word_at = p;
      if (digits_end + 1 < s.size() && s[digits_end] == '/') {
        std::size_t t = skip_spaces(s, digits_end + 1);
        std::size_t t_end = t;
        while (t_end < s.size() && is_digit(s[t_end])) ++t_end;
        std::int64_t total = 0;
        if (t_end > t && t_end - t <= 18 &&
            std::from_chars(s.data() + t, s.data() + t_end, total).ec == std::errc{} && total > 0)
          out.total = total;
      }
      return true;
    }
  }
  return false;
}

enum class KeyUnit { required, seconds, millis };

struct DurationKey {
  std::string_view name;  // lower case
  KeyUnit unit;
};

// Per-step duration keys, longest spellings first where one contains another.
constexpr std::array<DurationKey, 16> kDurationKeys = {{
    {"train_step_timing in s", KeyUnit::seconds},  // NeMo 2 / Megatron-Bridge progress printer
    {"timing_s/step", KeyUnit::seconds},           // verl
    {"time_per_step", KeyUnit::required},
    {"time/step", KeyUnit::required},
    {"sec/step", KeyUnit::seconds},
    {"ms/step", KeyUnit::millis},
    {"s/step", KeyUnit::seconds},
    {"step_time", KeyUnit::seconds},  // torchtitan prints seconds without a unit
    {"step time", KeyUnit::seconds},
    {"step_duration", KeyUnit::required},
    {"iter_time", KeyUnit::required},
    {"iter time", KeyUnit::required},
    {"batch_time", KeyUnit::required},
    {"seconds", KeyUnit::seconds},  // MaxText "seconds: 1.234"
    {"took", KeyUnit::required},    // llm.c train_gpt2.c "(took 318.5 ms)"
    {"dt", KeyUnit::required},
}};

// "time" alone is a per-step time only as a field of its own ("| time: 1.2s", ", time 123ms"),
// never the tail of a cumulative clock ("total time: 3.2m", "train time 5h").
bool opens_plain_time(std::string_view s, std::size_t at) {
  if (at == 0) return true;
  std::size_t p = at;
  while (p > 0 && (s[p - 1] == ' ' || s[p - 1] == '\t')) --p;
  if (p == 0) return true;
  const char c = s[p - 1];
  return c == '|' || c == ',' || c == ';' || c == '(' || c == '[' || c == '{';
}

std::optional<double> keyed_duration(std::string_view s) {
  for (std::size_t p = 0; p < s.size(); ++p) {
    if (!opens_field(s, p) || !is_alpha(s[p])) continue;
    for (const auto& key : kDurationKeys) {
      if (!spells_at(s, p, key.name)) continue;
      std::size_t q = p + key.name.size();
      if (q < s.size() && is_word_char(s[q])) continue;
      q = skip_spaces(s, q);
      const bool keyed = q < s.size() && (s[q] == ':' || s[q] == '=');
      if (keyed) q = skip_spaces(s, q + 1);
      // Keys that name their unit read "sec/step: 1.2"; the others may also read "dt 1.2ms".
      if (!keyed && key.unit != KeyUnit::required) continue;
      std::size_t end = 0;
      const auto v = number_at(s, q, end);
      if (!v) continue;
      std::size_t unit_end = 0;
      const auto unit = unit_at(s, end, unit_end);
      double seconds = 0;
      if (unit) {
        seconds = *v * *unit;
      } else if (key.unit == KeyUnit::seconds) {
        seconds = *v;
      } else if (key.unit == KeyUnit::millis) {
        seconds = *v / 1000.0;
      } else {
        continue;
      }
      if (plausible(seconds)) return seconds;
    }
    if (spells_at(s, p, "time") && opens_plain_time(s, p) &&
        !(p + 4 < s.size() && is_word_char(s[p + 4]))) {
      std::size_t q = skip_spaces(s, p + 4);
      if (q < s.size() && (s[q] == ':' || s[q] == '=')) q = skip_spaces(s, q + 1);
      std::size_t end = 0, unit_end = 0;
      const auto v = number_at(s, q, end);
      if (!v) continue;
      const auto unit = unit_at(s, end, unit_end);
      if (unit && plausible(*v * *unit)) return *v * *unit;
    }
  }
  return std::nullopt;
}

// A field that is only a duration in milliseconds ("| 318.52 ms |", llm.c), or a rate
// ("1.23 step/s", "2.5 it/s", "1.8 s/it", "0.9 s/step").
std::optional<double> bare_duration(std::string_view s) {
  for (std::size_t p = 0; p < s.size(); ++p) {
    if (!is_digit(s[p]) || (p > 0 && (is_digit(s[p - 1]) || s[p - 1] == '.'))) continue;
    std::size_t end = 0;
    const auto v = number_at(s, p, end);
    if (!v) continue;
    std::size_t u = end;
    if (u < s.size() && s[u] == ' ') ++u;
    const std::string_view rest = s.substr(u);
    const auto rate_unit = [&](std::string_view unit) {
      return rest.substr(0, unit.size()) == unit &&
             (rest.size() == unit.size() || !is_word_char(rest[unit.size()]));
    };
    if (rate_unit("step/s") || rate_unit("steps/s") || rate_unit("it/s")) {
      if (*v > 0 && plausible(1.0 / *v)) return 1.0 / *v;
      continue;
    }
    if (rate_unit("s/it") || rate_unit("s/step")) {
      if (plausible(*v)) return *v;
      continue;
    }
    if (rate_unit("ms") && p > 0) {
      // Only as a field of its own: a separator before it and after it (or the end).
      std::size_t b = p;
      while (b > 0 && s[b - 1] == ' ') --b;
      std::size_t a = skip_spaces(s, u + 2);
      const bool before = b == 0 || s[b - 1] == '|' || s[b - 1] == '(' || s[b - 1] == ',';
      const bool after = a == s.size() || s[a] == '|' || s[a] == ')' || s[a] == ',';
      if (before && after && plausible(*v / 1000.0)) return *v / 1000.0;
    }
    p = end;
  }
  return std::nullopt;
}

// The word right before `at` names an evaluation ("validate step: 100", "val loss 3.2").
bool evaluation_step(std::string_view s, std::size_t at) {
  const std::string_view word = word_before(s, at);
  return spells_at(word, 0, "val") || spells_at(word, 0, "eval") || spells_at(word, 0, "test");
}

// The training loss: "loss: 3.2", "loss=3.2", "train loss 4.67", "train_loss: 4.6"; a loss named
// for validation ("val loss", "val_loss", "eval_loss") marks the line as an evaluation instead.
void find_loss(std::string_view s, StepLineScan& out) {
  for (std::size_t p = s.find_first_of("lLt"); p != npos; p = s.find_first_of("lLt", p + 1)) {
    std::size_t q = 0;
    if (spells_at(s, p, "train_loss") && (p == 0 || !is_alpha(s[p - 1]))) {  // reduced_train_loss
      q = p + 10;
    } else if (spells_at(s, p, "loss") && (p == 0 || !is_word_char(s[p - 1]))) {
      if (evaluation_step(s, p)) {  // "val loss", "eval loss", "test loss"
        out.evaluation = true;
        continue;
      }
      q = p + 4;
    } else {
      continue;
    }
    if (q < s.size() && is_word_char(s[q])) continue;
    q = skip_spaces(s, q);
    if (q < s.size() && (s[q] == ':' || s[q] == '=')) q = skip_spaces(s, q + 1);
    std::size_t end = 0;
    if (const auto v = number_at(s, q, end)) {
      if (!out.loss) out.loss = *v;
    }
  }
}

// Words that make a line an evaluation report ("Validation bpb: 0.81", "val_loss:", "Evaluating").
bool names_evaluation(std::string_view s) {
  static constexpr std::array<std::string_view, 11> kWords = {
      "val",     "valid", "validate",   "validation", "validating", "val_loss",
      "val_bpb", "eval",  "evaluation", "evaluating", "eval_loss"};
  std::size_t p = 0;
  while (p < s.size()) {
    while (p < s.size() && !is_word_char(s[p])) ++p;
    std::size_t e = p;
    while (e < s.size() && is_word_char(s[e])) ++e;
    const std::size_t n = e - p;
    if (n >= 3 && n <= 10 && (lower(s[p]) == 'v' || lower(s[p]) == 'e')) {
      for (const auto word : kWords) {
        if (word.size() == n && spells_at(s, p, word)) return true;
      }
    }
    p = e;
  }
  return false;
}

// A "YYYY-MM-DD hh:mm:ss" timestamp among the line's first 96 bytes, at the start or after a
// space or '[' ("[titan] 2025-03-01 12:00:02,123 - root - INFO - step: 10 ...").
std::optional<SystemTime> early_timestamp(std::string_view s) {
  const std::size_t limit = std::min<std::size_t>(s.size(), 96);
  for (std::size_t p = 0; p + 19 <= s.size() && p < limit; ++p) {
    if (!is_digit(s[p]) || (s[p + 4] != '-' && s[p + 4] != '/')) continue;
    if (p > 0 && s[p - 1] != ' ' && s[p - 1] != '[') continue;
    if (const auto t = leading_timestamp(s.substr(p))) return t;
  }
  return std::nullopt;
}

}  // namespace

std::optional<StepLineScan> scan_step_line(std::string_view line, std::string& scratch) {
  const std::string_view s = without_colour(line, scratch);
  StepLineScan out;
  std::size_t word_at = 0;
  if (!find_step(s, out, word_at)) return std::nullopt;
  out.seconds = keyed_duration(s);
  if (!out.seconds) out.seconds = bare_duration(s);
  out.time = early_timestamp(s);
  find_loss(s, out);
  if (evaluation_step(s, word_at)) {
    out.evaluation = true;
    out.loss.reset();  // the evaluation's loss, not the training loss
  } else if (!out.evaluation) {
    out.evaluation = names_evaluation(s);
  }
  if (!out.seconds && !out.time && !out.evaluation && !out.loss) return std::nullopt;
  return out;
}

}  // namespace sparkops::trainlog

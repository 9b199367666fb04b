#include "host/vmstat.hpp"

#include <fmt/format.h>

#include "base/text.hpp"
#include "host/proc_text.hpp"
#include "host/read_optional.hpp"

namespace sparkops::host {

namespace {

std::optional<std::uint64_t> sum_reclaimers(const std::map<std::string, std::uint64_t>& kinds) {
  std::optional<std::uint64_t> total;
  for (const auto& [kind, value] : kinds) {
    // anon/file split the same pages by type; direct_throttle counts stall events, not pages.
    if (kind == "anon" || kind == "file" || kind == "direct_throttle") continue;
    total = total.value_or(0) + value;
  }
  return total;
}

}  // namespace

std::optional<std::uint64_t> Vmstat::pgscan_total() const {
  return sum_reclaimers(pgscan);
}
std::optional<std::uint64_t> Vmstat::pgsteal_total() const {
  return sum_reclaimers(pgsteal);
}

std::optional<std::uint64_t> Vmstat::workingset_refault_total() const {
  if (workingset_refault_anon || workingset_refault_file) {
    return workingset_refault_anon.value_or(0) + workingset_refault_file.value_or(0);
  }
  return workingset_refault;
}

Result<Vmstat> parse_vmstat(std::string_view text) {
  struct Field {
    std::string_view key;
    std::optional<std::uint64_t> Vmstat::*member;
  };
  static constexpr Field kFields[] = {
      {"oom_kill", &Vmstat::oom_kill},
      {"pgmajfault", &Vmstat::pgmajfault},
      {"workingset_refault_anon", &Vmstat::workingset_refault_anon},
      {"workingset_refault_file", &Vmstat::workingset_refault_file},
      {"workingset_refault", &Vmstat::workingset_refault},
      {"pswpin", &Vmstat::pswpin},
      {"pswpout", &Vmstat::pswpout},
  };
  Vmstat out;
  std::size_t line_no = 0;
  std::string_view line;
  for (std::string_view rest = text; proc_text::next_line(rest, line);) {
    ++line_no;
    // "pgmajfault 1234": a key and one number.
    std::string_view tokens = trim(line);
    std::string_view parts[3];
    std::size_t count = 0;
    while (count < 3 && proc_text::next_token(tokens, parts[count])) ++count;
    if (count == 0) continue;
    const std::string_view key = parts[0];
    const Field* field = nullptr;
    for (const auto& f : kFields) {
      if (f.key == key) field = &f;
    }
    std::map<std::string, std::uint64_t>* kinds = nullptr;
    std::string_view kind;
    if (key.starts_with("pgscan_")) kinds = &out.pgscan, kind = key.substr(7);
    if (key.starts_with("pgsteal_")) kinds = &out.pgsteal, kind = key.substr(8);
    if (field == nullptr && kinds == nullptr) continue;
    const auto value = count == 2 ? parse_u64(parts[1]) : std::nullopt;
    if (!value) {
      return fail(Errc::malformed,
                  fmt::format("/proc/vmstat line {}: expected \"key number\", got {}", line_no,
                              quote_for_message(line)));
    }
    if (field != nullptr) out.*(field->member) = *value;
    if (kinds != nullptr) (*kinds)[std::string(kind)] = *value;
  }
  return out;
}

namespace {

// The counter on `line` when its first token is `key`: "key number" gives the number, anything else
// on a key line gives nullopt with *matched set; another key leaves *matched false.
std::optional<std::uint64_t> counter_on_line(std::string_view line, std::string_view key,
                                             bool* matched) {
  std::string_view tokens = trim(line);
  std::string_view name, value, extra;
  *matched = proc_text::next_token(tokens, name) && name == key;
  if (!*matched) return std::nullopt;
  if (!proc_text::next_token(tokens, value) || proc_text::next_token(tokens, extra))
    return std::nullopt;
  return parse_u64(value);
}

}  // namespace

std::optional<std::uint64_t> vmstat_counter(std::string_view text, std::string_view key) {
  if (key.empty()) return std::nullopt;  // no token is empty: no line has this key
  // Skip ahead: only a line containing the key can start with it, so look for the key's next
  // occurrence (a vectorised search) instead of tokenising every line before it (~100 of the
  // live kernel's ~190 lines precede pgmajfault). The first line whose first token is the key
  // decides, as a walk of every line would.
  for (std::size_t from = 0;;) {
    const std::size_t at = text.find(key, from);
    if (at == std::string_view::npos) return std::nullopt;
    const std::size_t nl = text.rfind('\n', at);
    const std::size_t begin = nl == std::string_view::npos ? 0 : nl + 1;
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    bool matched = false;
    const auto value = counter_on_line(text.substr(begin, end - begin), key, &matched);
    if (matched) return value;
    from = end;
  }
}

Result<std::optional<Vmstat>> read_vmstat(const HostRoot& root) {
  auto text = read_optional(root, "/proc/vmstat");
  if (!text) return tl::unexpected(text.error());
  if (!*text) return std::optional<Vmstat>();
  auto parsed = parse_vmstat(**text);
  if (!parsed) return tl::unexpected(parsed.error());
  return std::optional<Vmstat>(std::move(*parsed));
}

}  // namespace sparkops::host

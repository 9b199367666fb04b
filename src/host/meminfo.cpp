#include "host/meminfo.hpp"

#include <span>

#include <fmt/format.h>

#include "base/text.hpp"
#include "host/proc_text.hpp"

namespace sparkops::host {

std::optional<std::uint64_t> Meminfo::hugepages_reserved_bytes() const {
  if (!hugepages_total || !hugepage_size_bytes) return std::nullopt;
  return *hugepages_total * *hugepage_size_bytes;
}

namespace {

struct Field {
  std::string_view key;
  std::optional<std::uint64_t> Meminfo::*member;
};

constexpr Field kFields[] = {
    {"MemTotal", &Meminfo::mem_total_bytes},
    {"MemFree", &Meminfo::mem_free_bytes},
    {"MemAvailable", &Meminfo::mem_available_bytes},
    {"Cached", &Meminfo::cached_bytes},
    // The sample's four end here (kSampleFields).
    {"Buffers", &Meminfo::buffers_bytes},
    {"SwapTotal", &Meminfo::swap_total_bytes},
    {"SwapFree", &Meminfo::swap_free_bytes},
    {"Shmem", &Meminfo::shmem_bytes},
    {"Mlocked", &Meminfo::mlocked_bytes},
    {"Mapped", &Meminfo::mapped_bytes},
    {"Active(file)", &Meminfo::active_file_bytes},
    {"Inactive(file)", &Meminfo::inactive_file_bytes},
    {"HugePages_Total", &Meminfo::hugepages_total},
    {"HugePages_Free", &Meminfo::hugepages_free},
    {"HugePages_Rsvd", &Meminfo::hugepages_rsvd},
    {"Hugepagesize", &Meminfo::hugepage_size_bytes},
};
constexpr std::size_t kSampleFields = 4;

// Parses the lines of `text` whose key is one of `fields` into `m`; stops after `stop_after`
// distinct fields are set (the size of `fields` reads every line).
Status parse_fields(std::string_view text, std::span<const Field> fields, std::size_t stop_after,
                    Meminfo& m) {
  std::size_t line_no = 0;
  std::size_t found = 0;
  std::string_view line;
  for (std::string_view rest = text; proc_text::next_line(rest, line);) {
    ++line_no;
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = line.substr(0, colon);
    const Field* field = nullptr;
    for (const auto& f : fields) {
      if (f.key == key) field = &f;
    }
    if (field == nullptr) continue;
    // "   131072 kB": a number, optionally "kB", nothing more.
    std::string_view values = trim(line.substr(colon + 1));
    std::string_view parts[3];
    std::size_t count = 0;
    while (count < 3 && proc_text::next_token(values, parts[count])) ++count;
    std::optional<std::uint64_t> value;
    if (count > 0) value = parse_u64(parts[0]);
    const bool kb = count == 2 && parts[1] == "kB";
    if (!value || count > 2 || (count == 2 && !kb)) {
      return fail(Errc::malformed, fmt::format("/proc/meminfo line {}: unexpected value {}",
                                               line_no, quote_for_message(line)));
    }
    auto& slot = m.*(field->member);
    if (!slot) ++found;
    slot = kb ? *value * 1024 : *value;
    if (found == stop_after) break;
  }
  return {};
}

}  // namespace

Result<Meminfo> parse_meminfo(std::string_view text) {
  Meminfo m;
  // Never stops early: a key may repeat, and the last line holding it wins.
  if (auto ok = parse_fields(text, kFields, std::size(kFields) + 1, m); !ok) {
    return tl::unexpected(ok.error());
  }
  return m;
}

Result<Meminfo> parse_meminfo_sample(std::string_view text) {
  Meminfo m;
  const std::span<const Field> four(kFields, kSampleFields);
  if (auto ok = parse_fields(text, four, kSampleFields, m); !ok) return tl::unexpected(ok.error());
  return m;
}

Result<Meminfo> read_meminfo(const HostRoot& root) {
  auto text = root.read("/proc/meminfo");
  if (!text) return tl::unexpected(text.error());
  return parse_meminfo(*text);
}

}  // namespace sparkops::host

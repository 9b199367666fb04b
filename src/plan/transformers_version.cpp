#include "plan/transformers_version.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "base/text.hpp"

namespace sparkops::plan {

std::string TransformersVersion::text() const {
  return fmt::format("{}.{}.{}", major, minor, patch);
}

namespace {

// Digits only, at most 4 of them (no release number is larger; no overflow).
bool read_number(std::string_view& s, std::uint32_t& out) {
  std::size_t n = 0;
  std::uint32_t v = 0;
  while (n < s.size() && n < 5 && std::isdigit(static_cast<unsigned char>(s[n]))) {
    v = v * 10 + static_cast<std::uint32_t>(s[n] - '0');
    ++n;
  }
  if (n == 0 || n > 4) return false;
  s.remove_prefix(n);
  out = v;
  return true;
}

// A PEP 440 pre-release, dev or post suffix: "rc1", "a0", "b2", ".dev0", ".post1", "-rc1".
bool is_release_suffix(std::string_view s) {
  if (s.empty()) return true;
  if (s.front() == '.' || s.front() == '-' || s.front() == '_') s.remove_prefix(1);
  for (const std::string_view tag : {"dev", "post", "rc", "a", "b"}) {
    if (s.substr(0, tag.size()) != tag) continue;
    std::string_view rest = s.substr(tag.size());
    std::uint32_t n = 0;
    return rest.empty() || (read_number(rest, n) && rest.empty());
  }
  return false;
}

}  // namespace

Result<TransformersVersion> parse_transformers_version(std::string_view text,
                                                       std::string_view what) {
  const auto bad = [&] {
    return fail(Errc::invalid_argument,
                fmt::format("{}: {} is not a transformers version like 4.46.0", what,
                            quote_for_message(text)));
  };
  std::string_view s = trim(text);
  if (!s.empty() && (s.front() == 'v' || s.front() == 'V')) s.remove_prefix(1);
  TransformersVersion v;
  if (!read_number(s, v.major) || s.empty() || s.front() != '.') return bad();
  s.remove_prefix(1);
  if (!read_number(s, v.minor)) return bad();
  if (s.size() > 1 && s.front() == '.' && std::isdigit(static_cast<unsigned char>(s[1]))) {
    s.remove_prefix(1);
    if (!read_number(s, v.patch)) return bad();
  }
  // A PEP 440 local label ("+cu121", "+git.abc123") names a build of the same release.
  if (const auto plus = s.find('+'); plus != std::string_view::npos) {
    const auto local = s.substr(plus + 1);
    const bool ok =
        !local.empty() && local.size() <= 64 && std::all_of(local.begin(), local.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '.';
        });
    if (!ok) return bad();
    s = s.substr(0, plus);
  }
  if (!is_release_suffix(s)) return bad();
  // transformers 1.x-3.x were pytorch-transformers' API (no ForCausalLMLoss, no Trainer loss
  // path this models); a major past 9 is no release.
  if (v.major < 4 || v.major > 9) return bad();
  return v;
}

LossKind hf_loss_for(const TransformersVersion& v) {
  if (v.major == 4 && v.minor <= 45) return LossKind::hf_shifted;
  if (v.major == 4 && v.minor <= 48) return LossKind::hf_shifted_kept;
  return LossKind::hf;
}

bool trainer_defaults_to_fused_adamw(const TransformersVersion& v) {
  return v.major > 4 || (v.major == 4 && v.minor >= 54);
}

bool is_hf_model_loss(LossKind l) {
  return l == LossKind::hf || l == LossKind::hf_shifted || l == LossKind::hf_shifted_kept;
}

}  // namespace sparkops::plan

#include "serving/server_log.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include "base/text.hpp"

namespace sparkops::serving {

namespace {

constexpr std::size_t kMaxLine = 64 * 1024;

std::size_t find_ci(std::string_view hay, std::string_view needle, std::size_t from = 0) {
  if (needle.empty() || hay.size() < needle.size()) return std::string_view::npos;
  for (std::size_t i = from; i + needle.size() <= hay.size(); ++i) {
    bool eq = true;
    for (std::size_t j = 0; j < needle.size(); ++j) {
      if (std::tolower(static_cast<unsigned char>(hay[i + j])) !=
          std::tolower(static_cast<unsigned char>(needle[j]))) {
        eq = false;
        break;
      }
    }
    if (eq) return i;
  }
  return std::string_view::npos;
}

std::size_t count_ci(std::string_view hay, std::string_view needle) {
  std::size_t n = 0;
  for (auto at = find_ci(hay, needle); at != std::string_view::npos;
       at = find_ci(hay, needle, at + needle.size()))
    ++n;
  return n;
}

bool is_num(char c) {
  return (c >= '0' && c <= '9') || c == '.';
}

// The first number at or after `from`.
std::optional<double> number_after(std::string_view s, std::size_t from,
                                   std::size_t* end = nullptr) {
  std::size_t i = from;
  while (i < s.size() && !(s[i] >= '0' && s[i] <= '9')) ++i;
  std::size_t j = i;
  while (j < s.size() && is_num(s[j])) ++j;
  if (j == i) return std::nullopt;
  const auto v = parse_double(s.substr(i, j - i));
  if (end != nullptr) *end = j;
  return v;
}

// The number just before `pos`, skipping spaces, a unit and an opening parenthesis.
// `pos` past the end (npos: a phrase not found) gives nullopt.
std::optional<double> number_before(std::string_view s, std::size_t pos) {
  if (pos > s.size()) return std::nullopt;
  std::size_t i = pos;
  const auto skip = [&] {
    while (i > 0 && (s[i - 1] == ' ' || s[i - 1] == '(' || s[i - 1] == '\t')) --i;
  };
  skip();
  for (std::string_view unit : {"GiB", "MiB", "GB", "MB"}) {
    if (i >= unit.size() && find_ci(s.substr(i - unit.size(), unit.size()), unit) == 0) {
      i -= unit.size();
      break;
    }
  }
  skip();
  std::size_t j = i;
  while (j > 0 && is_num(s[j - 1])) --j;
  if (j == i) return std::nullopt;
  return parse_double(s.substr(j, i - j));
}

struct Marker {
  std::string_view text;
  ServeEngine engine;
  std::uint64_t weight;
};

// Program-specific strings weigh more than a bare name in prose.
constexpr std::array kMarkers = {
    Marker{"gpu_memory_utilization", ServeEngine::vllm, 5},
    Marker{"gpu memory utilization", ServeEngine::vllm, 5},
    Marker{"enginecore", ServeEngine::vllm, 5},
    Marker{"kv cache memory", ServeEngine::vllm, 5},
    Marker{"max_model_len", ServeEngine::vllm, 5},
    Marker{"max-model-len", ServeEngine::vllm, 5},
    Marker{"cache blocks", ServeEngine::vllm, 5},
    Marker{"vllm", ServeEngine::vllm, 1},
    Marker{"mem_fraction_static", ServeEngine::sglang, 5},
    Marker{"mem-fraction-static", ServeEngine::sglang, 5},
    Marker{"sglang", ServeEngine::sglang, 1},
    Marker{"llama runner", ServeEngine::ollama, 5},
    Marker{"ollama serve", ServeEngine::ollama, 5},
    Marker{"ollama._types", ServeEngine::ollama, 5},
    Marker{"ollama_", ServeEngine::ollama, 5},
    Marker{"ollama", ServeEngine::ollama, 1},
    Marker{"llama_model_load", ServeEngine::llama_cpp, 5},
    Marker{"cudamalloc failed", ServeEngine::llama_cpp, 5},
    Marker{"ggml_backend_cuda", ServeEngine::llama_cpp, 5},
    Marker{"llama-server", ServeEngine::llama_cpp, 5},
    Marker{"llama_kv_cache", ServeEngine::llama_cpp, 5},
    Marker{"llama_init_from", ServeEngine::llama_cpp, 5},
    Marker{"llama.cpp", ServeEngine::llama_cpp, 1},
    Marker{"trtllm", ServeEngine::trtllm, 5},
    Marker{"tensorrt", ServeEngine::trtllm, 5},
    Marker{"triton", ServeEngine::trtllm, 1},
};

}  // namespace

double vllm_kv_pool(double total, double fraction, double consumed, double activation,
                    double cudagraph) {
  return fraction * total - consumed - activation - cudagraph;
}

void ServerLogScanner::line(std::string_view l) {
  for (const auto& m : kMarkers) {
    if (const auto n = count_ci(l, m.text); n > 0)
      votes_[static_cast<int>(m.engine)] += n * m.weight;
  }
  auto& f = facts_;
  if (const auto at = find_ci(l, "free memory on device"); at != std::string_view::npos) {
    const auto open = l.find('(', at);
    std::size_t end = 0;
    if (open != std::string_view::npos) {
      if (auto v = number_after(l, open, &end); v && end < l.size() && l[end] == '/') {
        f.free_gib = v;
        f.total_gib = number_after(l, end + 1);
      }
    }
  }
  if (const auto at = find_ci(l, "desired gpu memory utilization"); at != std::string_view::npos) {
    const auto open = l.find('(', at);
    std::size_t end = 0;
    if (open != std::string_view::npos) {
      if (auto v = number_after(l, open, &end)) {
        f.fraction = v;
        f.requested_gib = number_after(l, end);
      }
    }
    if (find_ci(l, "is less than desired") != std::string_view::npos) f.admission_refused = true;
  }
  if (const auto at = find_ci(l, "for consumed memory"); at != std::string_view::npos)
    f.consumed_gib = number_before(l, at);  // skips the space and the unit before the phrase
  if (const auto at = find_ci(l, "gib for peak activation"); at != std::string_view::npos)
    f.activation_gib = number_before(l, at);
  if (const auto at = find_ci(l, "gib for cudagraph memory"); at != std::string_view::npos)
    f.cudagraph_gib = number_before(l, at);
  if (const auto at = find_ci(l, "gib kv cache is needed"); at != std::string_view::npos)
    f.kv_needed_gib = number_before(l, at);
  if (const auto at = find_ci(l, "available kv cache memory"); at != std::string_view::npos)
    f.kv_available_gib = number_after(l, at);
  if (const auto at = find_ci(l, "estimated maximum model length is");
      at != std::string_view::npos) {
    if (const auto v = number_after(l, at); v && *v >= 0 && *v < 1e12)
      f.estimated_max_model_len = static_cast<std::uint64_t>(*v);
  }
  if (find_ci(l, "no available memory for the cache blocks") != std::string_view::npos)
    f.no_cache_blocks = true;
  if (find_ci(l, "cudamalloc failed") != std::string_view::npos) f.cuda_malloc_failed = true;
  if (const auto at = find_ci(l, "allocating ");
      at != std::string_view::npos && find_ci(l, "mib", at) != std::string_view::npos) {
    if (const auto v = number_after(l, at)) f.cuda_alloc_mib = v;
  }
  if (const auto at = find_ci(l, "requires more system memory"); at != std::string_view::npos) {
    std::size_t end = 0;
    f.ollama_required_gib = number_after(l, at, &end);
    const auto avail = find_ci(l, "than is available", at);
    if (avail != std::string_view::npos) f.ollama_available_gib = number_after(l, avail);
  }
}

void ServerLogScanner::feed(std::string_view chunk) {
  while (!chunk.empty()) {
    const auto nl = chunk.find('\n');
    const std::string_view piece = chunk.substr(0, nl);
    if (!truncated_) {
      const std::size_t room = kMaxLine - std::min(kMaxLine, partial_.size());
      partial_.append(piece.substr(0, room));
      if (piece.size() > room) truncated_ = true;
    }
    if (nl == std::string_view::npos) return;
    line(partial_);
    partial_.clear();
    truncated_ = false;
    chunk.remove_prefix(nl + 1);
  }
}

ServerLogFacts ServerLogScanner::finish() {
  if (!partial_.empty()) line(partial_);
  partial_.clear();
  std::size_t best = 0;
  for (std::size_t i = 1; i < 5; ++i) {
    if (votes_[i] > votes_[best]) best = i;
  }
  if (votes_[best] > 0) {
    auto e = static_cast<ServeEngine>(best);
    // Ollama's runner is llama.cpp: its ggml lines under an Ollama marker are Ollama's.
    if (e == ServeEngine::llama_cpp && votes_[static_cast<int>(ServeEngine::ollama)] > 0)
      e = ServeEngine::ollama;
    facts_.engine = e;
  }
  return facts_;
}

ServerLogFacts scan_server_log(std::string_view text) {
  ServerLogScanner s;
  s.feed(text);
  return s.finish();
}

}  // namespace sparkops::serving

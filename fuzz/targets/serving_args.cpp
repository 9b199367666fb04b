// libFuzzer target: the serving inputs a user or a log hands to `plan --serve`, `--beside` and
// `oom`: the shell-like command-line split, each engine's flag parser on the words it yields
// (with the device total picked from the input), the KV dtype names, and the server-log scanner
// on the raw text. Every outcome must be a value or an Error, never undefined behaviour (UBSan:
// float-cast-overflow on fractions and sizes, signed overflow on -ngl) or a crash.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "serving/engine_args.hpp"
#include "serving/server_log.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sparkops::serving;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)scan_server_log(text);
  constexpr std::array kEngines{ServeEngine::vllm, ServeEngine::sglang, ServeEngine::ollama,
                                ServeEngine::llama_cpp, ServeEngine::trtllm};
  for (const auto engine : kEngines) (void)parse_kv_dtype(engine, text.substr(0, 64));
  const auto line = split_command_line(text, "fuzz");
  if (!line) return 0;
  // 0 (unknown), a GB10's 121.6 GiB, or a small device: vLLM's defaults depend on it.
  const std::uint64_t totals[] = {0, 130'567'000'000ull, 8ull << 30};
  const std::uint64_t total = totals[size % 3];
  for (const auto engine : kEngines) (void)parse_serve_args(engine, line->argv, line->env, total);
  return 0;
}

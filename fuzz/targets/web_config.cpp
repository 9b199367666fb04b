// libFuzzer target: --web.config.file text -> parse_web_config (relative paths resolve under a
// directory that does not exist, so no file is read for them), then the Authorization header check
// over the same bytes against the users it found.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "exporter/basic_auth.hpp"
#include "exporter/web_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = sparkops::exporter::parse_web_config(text, "/nonexistent-sparkops-fuzz");
  (void)sparkops::exporter::is_bcrypt_hash(text);
  if (config && !config->basic_auth_users.empty() && size < 256) {
    // Only with cheap hashes: a cost-31 hash would turn one input into hours of bcrypt.
    bool cheap = true;
    for (const auto& [user, hash] : config->basic_auth_users) cheap = cheap && hash[4] == '0';
    if (cheap) {
      sparkops::exporter::BasicAuth auth(std::move(config->basic_auth_users));
      (void)auth.allows(text);
    }
  }
  return 0;
}

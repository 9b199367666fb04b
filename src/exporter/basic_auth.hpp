#pragma once
// HTTP basic authentication against bcrypt hashes (the web config's basic_auth_users), verified
// with libxcrypt's crypt_r, which implements $2a$, $2b$ and $2y$ (crypt(5)). Behaves like
// exporter-toolkit's handler (web/handler.go, v0.17.1): an unknown user is checked against a real
// hash anyway so timing does not reveal which users exist; results are cached per
// (user, hash, password) so a scraper pays one bcrypt (~70 ms at cost 10) once, not per request;
// bcrypt computations run one at a time, so wrong guesses cannot take every core.
// Thread-safe.

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace sparkops::exporter {

// "$2a$" / "$2b$" / "$2y$", two-digit cost 04-31, "$", 53 characters of bcrypt's base64.
bool is_bcrypt_hash(std::string_view hash);

// True when `password` hashes to `hash`. Passwords over 72 bytes (bcrypt's limit: Go's bcrypt
// refuses them, others truncate) or holding NUL never match.
bool bcrypt_matches(std::string_view password, const std::string& hash);

class BasicAuth {
 public:
  explicit BasicAuth(std::map<std::string, std::string, std::less<>> users);
  bool enabled() const { return !users_.empty(); }
  // `authorization` is the Authorization header's value ("Basic base64(user:password)").
  bool allows(std::string_view authorization);

 private:
  std::map<std::string, std::string, std::less<>> users_;
  std::mutex cache_mutex_;
  std::unordered_map<std::string, bool> cache_;  // SHA-256(user, hash, password) -> verdict
  std::mutex bcrypt_mutex_;
};

}  // namespace sparkops::exporter

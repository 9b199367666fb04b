#include "exporter/basic_auth.hpp"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <memory>
#include <optional>
#include <vector>

namespace sparkops::exporter {

namespace {

constexpr std::size_t kBcryptMaxPassword = 72;
constexpr std::size_t kCacheEntries = 1024;
constexpr std::size_t kMaxAuthorization = 4096;

bool is_bcrypt_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '/';
}

std::optional<std::string> base64_decode(std::string_view in) {
  if (in.empty() || in.size() % 4 != 0 || in.size() > kMaxAuthorization) return std::nullopt;
  std::vector<unsigned char> out(in.size() / 4 * 3);
  const int n = EVP_DecodeBlock(out.data(), reinterpret_cast<const unsigned char*>(in.data()),
                                static_cast<int>(in.size()));
  if (n < 0) return std::nullopt;
  // EVP_DecodeBlock counts the bytes the '=' padding stands for; they are not data.
  std::size_t len = static_cast<std::size_t>(n);
  if (in.back() == '=') --len;
  if (in.size() >= 2 && in[in.size() - 2] == '=') --len;
  return std::string(reinterpret_cast<const char*>(out.data()), len);
}

std::string cache_key(std::string_view user, std::string_view hash, std::string_view password) {
  std::string material;
  material.reserve(user.size() + hash.size() + password.size() + 2);
  material.append(user).push_back('\0');
  material.append(hash).push_back('\0');
  material.append(password);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(material.data(), material.size(), digest, &len, EVP_sha256(), nullptr);
  OPENSSL_cleanse(material.data(), material.size());
  return std::string(reinterpret_cast<const char*>(digest), len);
}

}  // namespace

bool is_bcrypt_hash(std::string_view h) {
  if (h.size() != 60 || h[0] != '$' || h[1] != '2' || h[3] != '$' || h[6] != '$') return false;
  if (h[2] != 'a' && h[2] != 'b' && h[2] != 'y') return false;
  if (h[4] < '0' || h[4] > '9' || h[5] < '0' || h[5] > '9') return false;
  const int cost = (h[4] - '0') * 10 + (h[5] - '0');
  if (cost < 4 || cost > 31) return false;
  for (std::size_t i = 7; i < h.size(); ++i) {
    if (!is_bcrypt_char(h[i])) return false;
  }
  return true;
}

bool bcrypt_matches(std::string_view password, const std::string& hash) {
  if (!is_bcrypt_hash(hash) || password.size() > kBcryptMaxPassword ||
      password.find('\0') != std::string_view::npos) {
    return false;
  }
  // struct crypt_data is ~32 KiB: on the heap, not a handler thread's stack.
  auto data = std::make_unique<crypt_data>();
  const std::string pw(password);
  const char* out = crypt_r(pw.c_str(), hash.c_str(), data.get());
  // libxcrypt returns NULL or a failure token starting with '*' on error.
  if (out == nullptr || out[0] == '*') return false;
  const std::string_view result(out);
  const bool same =
      result.size() == hash.size() && CRYPTO_memcmp(result.data(), hash.data(), hash.size()) == 0;
  OPENSSL_cleanse(data.get(), sizeof(crypt_data));
  return same;
}

BasicAuth::BasicAuth(std::map<std::string, std::string, std::less<>> users)
    : users_(std::move(users)) {}

bool BasicAuth::allows(std::string_view authorization) {
  if (users_.empty()) return true;
  constexpr std::string_view kBasic = "Basic ";
  if (authorization.size() <= kBasic.size() || authorization.substr(0, kBasic.size()) != kBasic)
    return false;
  const auto decoded = base64_decode(authorization.substr(kBasic.size()));
  if (!decoded) return false;
  const auto colon = decoded->find(':');
  if (colon == std::string::npos) return false;
  const std::string_view user = std::string_view(*decoded).substr(0, colon);
  const std::string_view password = std::string_view(*decoded).substr(colon + 1);

  const auto it = users_.find(user);
  const bool known = it != users_.end();
  // Unknown users are checked against a real hash (same cost), then refused whatever the result.
  const std::string& hash = known ? it->second : users_.begin()->second;
  const std::string key = cache_key(user, hash, password);
  {
    const std::lock_guard lock(cache_mutex_);
    if (const auto c = cache_.find(key); c != cache_.end()) return known && c->second;
  }
  bool match = false;
  {
    const std::lock_guard lock(bcrypt_mutex_);
    match = bcrypt_matches(password, hash);
  }
  const bool verdict = known && match;
  const std::lock_guard lock(cache_mutex_);
  if (cache_.size() >= kCacheEntries) cache_.clear();
  cache_[key] = verdict;
  return verdict;
}

}  // namespace sparkops::exporter

#pragma once
// The narrow HTTP interface the Hub client needs (GET, optional byte range, headers out, a
// timeout), and its libcurl implementation. libcurl is dlopened on the first request
// (libcurl.so.4, or SPARKOPS_CURL_LIB), so commands that never go online map neither libcurl nor
// its TLS library. Proxies come from the environment as libcurl reads them (http_proxy,
// https_proxy/HTTPS_PROXY, no_proxy).

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/progress.hpp"
#include "base/result.hpp"

namespace sparkops::models {

struct HttpRequest {
  std::string url;
  std::vector<std::string> headers;                              // "Authorization: Bearer ..."
  std::optional<std::pair<std::uint64_t, std::uint64_t>> range;  // inclusive byte range
  std::chrono::milliseconds timeout{20000};
  std::uint64_t max_body_bytes = 64ULL << 20;  // a longer body is an Error (too_large)
  // Called as the body arrives (libcurl's write callback) with this answer's body bytes so far;
  // empty: not called. A progress line's feed (base/progress.hpp), so a large answer shows that it
  // is moving rather than only when it is complete.
  ByteProgress on_body_bytes;
};

struct HttpResponse {
  long status = 0;
  std::map<std::string, std::string> headers;  // lower-case names, last value wins
  std::string body;
};

// Transport failures (DNS, refused, TLS, timeout) are Errors: io, with "timed out" in the detail
// for a timeout. Any HTTP status is a response.
class HttpClient {
 public:
  virtual ~HttpClient() = default;
  virtual Result<HttpResponse> get(const HttpRequest& request) const = 0;
};

// libcurl over dlopen. Construction loads nothing; the first get() loads the library (an Error
// naming the library when it is absent).
std::unique_ptr<HttpClient> make_curl_client(std::string library_path = {});

}  // namespace sparkops::models

// libcurl through dlopen: curl/curl.h supplies the types and option constants only; the seven
// functions below are resolved from libcurl.so.4 on first use, so the binary does not link libcurl
// (and through it libssl/libcrypto) and commands that stay offline never load it.

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <mutex>

#include <curl/curl.h>
#include <fmt/format.h>

#include "models/http_client.hpp"

namespace sparkops::models {

namespace {

// The libcurl subset sparkops calls (all present since libcurl 7.17; setopt/getinfo are
// variadic in the C API and called with exactly the argument type each option documents).
struct CurlApi {
  void* handle = nullptr;
  CURLcode (*global_init)(long) = nullptr;
  CURL* (*easy_init)() = nullptr;
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...) = nullptr;
  CURLcode (*easy_perform)(CURL*) = nullptr;
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...) = nullptr;
  void (*easy_cleanup)(CURL*) = nullptr;
  const char* (*easy_strerror)(CURLcode) = nullptr;
  curl_slist* (*slist_append)(curl_slist*, const char*) = nullptr;
  void (*slist_free_all)(curl_slist*) = nullptr;
};

template <class F>
bool resolve(void* handle, const char* name, F& out) {
  void* sym = dlsym(handle, name);
  if (sym == nullptr) return false;
  out = reinterpret_cast<F>(sym);
  return true;
}

struct Transfer {
  std::string body;
  std::map<std::string, std::string> headers;
  std::uint64_t max_body = 0;
  bool overflow = false;
  const ByteProgress* progress = nullptr;  // the request's on_body_bytes, when set
};

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t bytes = size * n;
  if (t->body.size() + bytes > t->max_body) {
    t->overflow = true;
    return 0;  // aborts the transfer with CURLE_WRITE_ERROR
  }
  t->body.append(data, bytes);
  if (t->progress != nullptr) (*t->progress)(t->body.size());
  return bytes;
}

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t bytes = size * n;
  const std::string line(data, bytes);
  if (line.rfind("HTTP/", 0) == 0) t->headers.clear();  // a redirect's headers are not the answer's
  const auto colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::string value = line.substr(colon + 1);
    const auto b = value.find_first_not_of(" \t");
    const auto e = value.find_last_not_of(" \t\r\n");
    t->headers[name] = b == std::string::npos ? "" : value.substr(b, e - b + 1);
  }
  return bytes;
}

class CurlClient final : public HttpClient {
 public:
  explicit CurlClient(std::string path) : path_(std::move(path)) {}
  ~CurlClient() override {
    if (api_.handle != nullptr) dlclose(api_.handle);
  }
  CurlClient(const CurlClient&) = delete;
  CurlClient& operator=(const CurlClient&) = delete;

  Result<HttpResponse> get(const HttpRequest& req) const override {
    std::call_once(once_, [this] { load(); });
    if (!load_error_.empty()) return fail(Errc::unsupported, load_error_);
    CURL* curl = api_.easy_init();
    if (curl == nullptr) return fail(Errc::io, "libcurl: curl_easy_init failed");
    Transfer t;
    t.max_body = req.max_body_bytes;
    if (req.on_body_bytes) t.progress = &req.on_body_bytes;
    curl_slist* headers = nullptr;
    for (const auto& h : req.headers) headers = api_.slist_append(headers, h.c_str());
    const std::string range =
        req.range ? fmt::format("{}-{}", req.range->first, req.range->second) : std::string();
    api_.easy_setopt(curl, CURLOPT_URL, req.url.c_str());
    api_.easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    api_.easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    api_.easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);  // the Hub redirects LFS files to its CDN
    api_.easy_setopt(curl, CURLOPT_MAXREDIRS, 10L);
    api_.easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    api_.easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(req.timeout.count()));
    api_.easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(req.timeout.count()));
    api_.easy_setopt(curl, CURLOPT_USERAGENT, "sparkops (model headers only)");
    api_.easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");
    if (headers != nullptr) api_.easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    if (req.range) api_.easy_setopt(curl, CURLOPT_RANGE, range.c_str());
    api_.easy_setopt(curl, CURLOPT_WRITEFUNCTION, &on_body);
    api_.easy_setopt(curl, CURLOPT_WRITEDATA, &t);
    api_.easy_setopt(curl, CURLOPT_HEADERFUNCTION, &on_header);
    api_.easy_setopt(curl, CURLOPT_HEADERDATA, &t);
    const CURLcode rc = api_.easy_perform(curl);
    long status = 0;
    api_.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    api_.easy_cleanup(curl);
    if (headers != nullptr) api_.slist_free_all(headers);
    if (t.overflow) {
      return fail(Errc::too_large,
                  fmt::format("{}: answer longer than {} bytes", req.url, req.max_body_bytes));
    }
    if (rc == CURLE_OPERATION_TIMEDOUT) {
      return fail(Errc::io, fmt::format("{}: timed out after {} ms", req.url, req.timeout.count()));
    }
    if (rc != CURLE_OK) {
      return fail(Errc::io, fmt::format("{}: {}", req.url, api_.easy_strerror(rc)));
    }
    return HttpResponse{status, std::move(t.headers), std::move(t.body)};
  }

 private:
  void load() const {
    std::string path = path_;
    if (path.empty()) {
      const char* env = std::getenv("SPARKOPS_CURL_LIB");
      path = env != nullptr && *env != '\0' ? env : "libcurl.so.4";
    }
    api_.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (api_.handle == nullptr) {
      load_error_ =
          fmt::format("cannot load {} for Hub access (install libcurl4): {}", path, dlerror());
      return;
    }
    const bool ok = resolve(api_.handle, "curl_global_init", api_.global_init) &&
                    resolve(api_.handle, "curl_easy_init", api_.easy_init) &&
                    resolve(api_.handle, "curl_easy_setopt", api_.easy_setopt) &&
                    resolve(api_.handle, "curl_easy_perform", api_.easy_perform) &&
                    resolve(api_.handle, "curl_easy_getinfo", api_.easy_getinfo) &&
                    resolve(api_.handle, "curl_easy_cleanup", api_.easy_cleanup) &&
                    resolve(api_.handle, "curl_easy_strerror", api_.easy_strerror) &&
                    resolve(api_.handle, "curl_slist_append", api_.slist_append) &&
                    resolve(api_.handle, "curl_slist_free_all", api_.slist_free_all);
    if (!ok) {
      load_error_ = fmt::format("{}: not a libcurl (missing curl_easy_* symbols)", path);
      return;
    }
    if (api_.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
      load_error_ = fmt::format("{}: curl_global_init failed", path);
    }
  }

  std::string path_;
  mutable std::once_flag once_;
  mutable CurlApi api_;
  mutable std::string load_error_;
};

}  // namespace

std::unique_ptr<HttpClient> make_curl_client(std::string library_path) {
  return std::make_unique<CurlClient>(std::move(library_path));
}

}  // namespace sparkops::models

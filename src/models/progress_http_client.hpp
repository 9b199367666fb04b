#pragma once
// A Hub fetch that says how far it got: wraps the HTTP client the Hub reader uses and reports the
// bytes of every answer (config.json, the index, each shard's safetensors header) as it arrives,
// so a slow Hub shows that it is being read rather than a silent terminal (cli draws the
// reports on its progress line).

#include <cstdint>
#include <utility>

#include "base/progress.hpp"
#include "models/http_client.hpp"

namespace sparkops::models {

class ProgressHttpClient final : public HttpClient {
 public:
  // `inner` must outlive this client.
  ProgressHttpClient(const HttpClient& inner, ByteProgress progress)
      : inner_(inner), progress_(std::move(progress)) {}

  Result<HttpResponse> get(const HttpRequest& request) const override {
    report();  // the first request reports 0 bytes before the network answers
    auto response = inner_.get(request);
    if (response) {
      bytes_ += response->body.size();
      report();
    }
    return response;
  }

 private:
  void report() const {
    if (progress_) progress_(bytes_);
  }

  const HttpClient& inner_;
  ByteProgress progress_;
  mutable std::uint64_t bytes_ = 0;
};

}  // namespace sparkops::models

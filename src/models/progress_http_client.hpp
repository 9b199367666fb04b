#pragma once
// A Hub fetch that says how far it got: wraps the HTTP client the Hub reader uses and reports the
// bytes of every answer (config.json, the index, each shard's safetensors header) as they arrive,
// inside an answer too (HttpRequest::on_body_bytes, fed by libcurl's write callback), so a slow
// Hub shows that it is being read rather than a silent terminal (cli draws the reports on its
// progress line, which limits how often it redraws).

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
    const std::uint64_t before = bytes_;
    HttpRequest with_progress = request;
    with_progress.on_body_bytes = [this, before,
                                   outer = request.on_body_bytes](std::uint64_t body_bytes) {
      if (progress_) progress_(before + body_bytes);
      if (outer) outer(body_bytes);
    };
    auto response = inner_.get(with_progress);
    if (response) {
      bytes_ = before + response->body.size();
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

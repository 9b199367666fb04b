#pragma once
// A Hub fetch on the progress line: wraps the HTTP client the Hub reader uses and reports the
// bytes of every answer (config.json, the index, each shard's safetensors header) as it arrives,
// so a slow Hub shows that it is being read rather than a silent terminal.

#include "cli/progress_line.hpp"
#include "models/http_client.hpp"

namespace sparkops::cli {

class ProgressHttpClient final : public models::HttpClient {
 public:
  // Both must outlive this client.
  ProgressHttpClient(const models::HttpClient& inner, ProgressLine& line)
      : inner_(inner), line_(line) {}
  Result<models::HttpResponse> get(const models::HttpRequest& request) const override;

 private:
  const models::HttpClient& inner_;
  ProgressLine& line_;
  mutable std::uint64_t bytes_ = 0;
};

}  // namespace sparkops::cli

#include "cli/hub_progress.hpp"

namespace sparkops::cli {

Result<models::HttpResponse> ProgressHttpClient::get(const models::HttpRequest& request) const {
  line_.update(bytes_);  // the first request draws the line before the network answers
  auto response = inner_.get(request);
  if (response) {
    bytes_ += response->body.size();
    line_.update(bytes_);
  }
  return response;
}

}  // namespace sparkops::cli

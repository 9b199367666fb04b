#include "fake_hub.hpp"

#include <chrono>
#include <regex>

#include <httplib.h>
#include <nlohmann/json.hpp>

namespace sparkops::models::testing {

struct FakeHub::Impl {
  httplib::Server server;
  std::thread thread;
  int port = 0;
};

FakeHub::FakeHub(std::map<std::string, FakeRepo> repos, std::string token)
    : impl_(std::make_unique<Impl>()) {
  auto* self = this;
  impl_->server.Get(
      R"(/([^/]+)/([^/]+)/resolve/([^/]+)/(.+))",
      [self, repos, token](const httplib::Request& req, httplib::Response& res) {
        self->requests_++;
        const std::string repo = req.matches[1].str() + "/" + req.matches[2].str();
        const std::string rev = req.matches[3].str();
        const std::string file = req.matches[4].str();
        const auto it = repos.find(repo);
        if (it == repos.end()) {
          res.status = 401;
          res.set_header("X-Error-Code", "RepoNotFound");
          res.set_content("Repository not found", "text/plain");
          return;
        }
        const FakeRepo& r = it->second;
        if (r.slow_ms > 0) {
          std::this_thread::sleep_for(std::chrono::milliseconds(r.slow_ms));
        }
        if (r.gated && req.get_header_value("Authorization") != "Bearer " + token) {
          res.status = 401;
          res.set_header("X-Error-Code", "GatedRepo");
          res.set_content("Access to model is restricted", "text/plain");
          return;
        }
        const bool known_rev = rev == r.commit || std::find(r.revisions.begin(), r.revisions.end(),
                                                            rev) != r.revisions.end();
        if (!known_rev) {
          res.status = 404;
          res.set_header("X-Error-Code", "RevisionNotFound");
          return;
        }
        const auto f = r.files.find(file);
        if (f == r.files.end()) {
          res.status = 404;
          res.set_header("X-Error-Code", "EntryNotFound");
          return;
        }
        res.set_header("X-Repo-Commit", r.commit);
        res.set_header("ETag", "\"" + std::to_string(std::hash<std::string>{}(f->second)) + "\"");
        res.set_content(f->second, "application/octet-stream");
      });
  impl_->server.set_post_routing_handler(
      [self](const httplib::Request& req, httplib::Response& res) {
        std::uint64_t body = res.body.size();
        if (!req.ranges.empty()) {
          // The library cuts the body to the range after this handler: record the range's length.
          const auto& r = req.ranges.front();
          if (r.first >= 0 && r.second >= r.first)
            body = static_cast<std::uint64_t>(r.second - r.first + 1);
        }
        std::uint64_t cur = self->largest_body_.load();
        while (body > cur && !self->largest_body_.compare_exchange_weak(cur, body)) {
        }
      });
  impl_->port = impl_->server.bind_to_any_port("127.0.0.1");
  impl_->thread = std::thread([this] { impl_->server.listen_after_bind(); });
  while (!impl_->server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

FakeHub::~FakeHub() {
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

std::string FakeHub::endpoint() const {
  return "http://127.0.0.1:" + std::to_string(impl_->port);
}

std::string safetensors_bytes(
    const std::vector<std::pair<std::string, std::vector<std::uint64_t>>>& tensors) {
  nlohmann::json h = nlohmann::json::object();
  std::uint64_t offset = 0;
  for (const auto& [name, shape] : tensors) {
    std::uint64_t n = 2;
    for (const auto d : shape) n *= d;
    h[name] = {{"dtype", "BF16"}, {"shape", shape}, {"data_offsets", {offset, offset + n}}};
    offset += n;
  }
  std::string header = h.dump();
  while (header.size() % 8 != 0) header += ' ';
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i)
    out[static_cast<std::size_t>(i)] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  out += header;
  out.append(static_cast<std::size_t>(offset), '\0');
  return out;
}

}  // namespace sparkops::models::testing

#pragma once
// Test helper: a stand-in Hugging Face Hub on 127.0.0.1 (cpp-httplib, ranges answered by the
// library as the real Hub's CDN does). /ORG/NAME/resolve/REV/FILE serves the repo's files with
// X-Repo-Commit and ETag; gated repos answer 401 + X-Error-Code GatedRepo without the token,
// unknown repos 401 RepoNotFound (as the Hub does for anonymous callers), missing files 404
// EntryNotFound, and a slow repo answers after `slow_ms`. Every answer's body size is recorded.

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace sparkops::models::testing {

struct FakeRepo {
  std::map<std::string, std::string> files;  // name -> bytes
  std::string commit = "0123456789abcdef0123456789abcdef01234567";
  std::vector<std::string> revisions = {"main"};
  bool gated = false;
  int slow_ms = 0;
};

class FakeHub {
 public:
  explicit FakeHub(std::map<std::string, FakeRepo> repos, std::string token = "hf_good");
  ~FakeHub();
  FakeHub(const FakeHub&) = delete;
  FakeHub& operator=(const FakeHub&) = delete;

  std::string endpoint() const;  // http://127.0.0.1:PORT
  std::uint64_t largest_body_served() const { return largest_body_.load(); }
  std::uint64_t requests() const { return requests_.load(); }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::atomic<std::uint64_t> largest_body_{0};
  std::atomic<std::uint64_t> requests_{0};
};

// A complete safetensors file (header + zero data) for `tensors`, as bytes.
std::string safetensors_bytes(
    const std::vector<std::pair<std::string, std::vector<std::uint64_t>>>& tensors);

}  // namespace sparkops::models::testing

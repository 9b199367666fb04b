#pragma once
// A child process left running while a test talks to it (sparkops serve, prometheus). Output goes
// to files in a scratch directory; every wait is bounded; the destructor kills what is still alive.

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sparkops::test {

class BackgroundProcess {
 public:
  BackgroundProcess(std::vector<std::string> argv, const std::map<std::string, std::string>& env,
                    std::filesystem::path log_dir);
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  // Waits until stdout+stderr contain `needle`, the process exits, or `timeout` passes.
  bool wait_for_output(const std::string& needle, std::chrono::milliseconds timeout);
  std::string output() const;
  // SIGTERM, then SIGKILL after `grace`. Returns the exit code (128+n when killed by signal n).
  int stop(std::chrono::milliseconds grace = std::chrono::seconds{10});
  bool running();

 private:
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
  std::filesystem::path out_path_;
};

// A TCP port free on 127.0.0.1 right now (bind to 0, read, close).
int free_loopback_port();

// "sparkops serve: listening on http://127.0.0.1:PORT/" -> PORT; 0 when absent.
int port_from_listen_line(const std::string& output);

}  // namespace sparkops::test

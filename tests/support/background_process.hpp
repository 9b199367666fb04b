#pragma once
// A child process left running while a test talks to it (sparkops serve, sample, watch;
// prometheus). Its environment is this process's without the variables that steer sparkops
// (SPARKOPS_*, FAKE_NVML_*, XDG_*, COLUMNS), with HOME in a scratch folder and TZ=UTC, then the
// test's own. Output goes to files; every wait is bounded; the destructor kills what is alive.

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sparkops::test {

struct BackgroundOptions {
  std::map<std::string, std::string> env;  // set over the environment above; "" unsets
  std::filesystem::path home;              // HOME, and XDG_CONFIG_HOME = home/config
  std::filesystem::path cwd;               // empty: this process's
  std::filesystem::path out;               // stdout; empty: /dev/null
  std::filesystem::path err;               // stderr; empty: /dev/null; == out: one file
  std::optional<unsigned> user;            // run as this uid and gid (65534: nobody); needs root
};

class BackgroundProcess {
 public:
  BackgroundProcess(std::vector<std::string> argv, BackgroundOptions options);
  // stdout and stderr together in a fresh file under log_dir, which is HOME too.
  BackgroundProcess(std::vector<std::string> argv, const std::map<std::string, std::string>& env,
                    std::filesystem::path log_dir);
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  // Waits until the output file contains `needle`, the process exits, or `timeout` passes.
  bool wait_for_output(const std::string& needle, std::chrono::milliseconds timeout);
  // The stdout file (stdout+stderr with the log_dir constructor); "" when it goes to /dev/null.
  std::string output() const;
  void signal(int sig) const;
  // Waits for the exit, SIGKILL after `timeout`. The exit code (128+n when killed by signal n).
  int wait(std::chrono::milliseconds timeout = std::chrono::minutes{5});
  // SIGTERM, then SIGKILL after `grace`. Returns the exit code (128+n when killed by signal n).
  int stop(std::chrono::milliseconds grace = std::chrono::seconds{10});
  bool running();
  pid_t pid() const { return pid_; }

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

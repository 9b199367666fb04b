#include "support/background_process.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string_view>
#include <thread>

#include "base/wait_status.hpp"

extern char** environ;

namespace sparkops::test {

namespace {

bool steers_sparkops(std::string_view name) {
  for (std::string_view prefix : {"SPARKOPS_", "FAKE_NVML_", "XDG_"})
    if (name.substr(0, prefix.size()) == prefix) return true;
  return name == "COLUMNS";
}

std::vector<std::string> child_environment(const BackgroundOptions& o) {
  std::map<std::string, std::string> vars;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv(*e);
    const auto eq = kv.find('=');
    if (eq == std::string::npos || steers_sparkops(std::string_view(kv).substr(0, eq))) continue;
    vars[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  vars["HOME"] = o.home.string();
  vars["XDG_CONFIG_HOME"] = (o.home / "config").string();
  vars["TZ"] = "UTC";
  for (const auto& [k, v] : o.env) {
    if (v.empty())
      vars.erase(k);
    else
      vars[k] = v;
  }
  std::vector<std::string> out;
  for (const auto& [k, v] : vars) out.push_back(k + "=" + v);
  return out;
}

int open_output(const std::filesystem::path& p) {
  return p.empty() ? ::open("/dev/null", O_WRONLY | O_CLOEXEC)
                   : ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

}  // namespace

BackgroundProcess::BackgroundProcess(std::vector<std::string> argv, BackgroundOptions o)
    : out_path_(o.out) {
  if (!o.home.empty()) std::filesystem::create_directories(o.home);
  std::vector<std::string> env_strings = child_environment(o);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<char*> argp;
  for (auto& s : argv) argp.push_back(s.data());
  argp.push_back(nullptr);

  const int out_fd = open_output(o.out);
  const int err_fd = o.err == o.out ? out_fd : open_output(o.err);
  const int in_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(in_fd, 0);
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (!o.cwd.empty() && ::chdir(o.cwd.c_str()) != 0) ::_exit(126);
    // The group first: after setuid a process may no longer change it.
    if (o.user && (::setgid(*o.user) != 0 || ::setuid(*o.user) != 0)) ::_exit(125);
    ::execve(argp[0], argp.data(), envp.data());
    std::fprintf(stderr, "execve %s failed\n", argp[0]);
    ::_exit(127);
  }
  ::close(in_fd);
  if (err_fd != out_fd) ::close(err_fd);
  ::close(out_fd);
}

BackgroundProcess::BackgroundProcess(std::vector<std::string> argv,
                                     const std::map<std::string, std::string>& env,
                                     std::filesystem::path log_dir)
    : BackgroundProcess(argv, [&] {
        std::filesystem::create_directories(log_dir);
        BackgroundOptions o;
        o.env = env;
        o.home = log_dir;
        o.out = log_dir / (std::filesystem::path(argv.at(0)).filename().string() + "-" +
                           std::to_string(::getpid()) + "-" + std::to_string(std::rand()) + ".log");
        o.err = o.out;
        return o;
      }()) {}

BackgroundProcess::~BackgroundProcess() {
  if (pid_ > 0 && !exit_code_) stop(std::chrono::seconds{5});
}

std::string BackgroundProcess::output() const {
  if (out_path_.empty()) return {};
  std::ifstream in(out_path_, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void BackgroundProcess::signal(int sig) const {
  if (pid_ > 0 && !exit_code_) ::kill(pid_, sig);
}

bool BackgroundProcess::running() {
  if (pid_ <= 0 || exit_code_) return false;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    exit_code_ = exit_code_from_wait_status(status);
    return false;
  }
  return true;
}

int BackgroundProcess::wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (running()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
      exit_code_ = exit_code_from_wait_status(status);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{5});
  }
  return exit_code_.value_or(-1);
}

bool BackgroundProcess::wait_for_output(const std::string& needle,
                                        std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (output().find(needle) != std::string::npos) return true;
    if (!running()) return output().find(needle) != std::string::npos;
    std::this_thread::sleep_for(std::chrono::milliseconds{50});
  }
  return false;
}

int BackgroundProcess::stop(std::chrono::milliseconds grace) {
  if (!running()) return exit_code_.value_or(-1);
  ::kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!running()) return *exit_code_;
    std::this_thread::sleep_for(std::chrono::milliseconds{20});
  }
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  exit_code_ = 128 + SIGKILL;
  return *exit_code_;
}
int free_loopback_port() {
  const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  int port = 0;
  if (::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    socklen_t len = sizeof addr;
    ::getsockname(s, reinterpret_cast<sockaddr*>(&addr), &len);
    port = ntohs(addr.sin_port);
  }
  ::close(s);
  return port;
}

int port_from_listen_line(const std::string& output) {
  static const std::regex re(R"(listening on https?://[^ ]*:([0-9]+)/)");
  std::smatch m;
  if (!std::regex_search(output, m, re)) return 0;
  return std::stoi(m[1].str());
}

}  // namespace sparkops::test

#include "support/test_support.hpp"

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "base/wait_status.hpp"
extern char** environ;

namespace sparkops::test {

std::filesystem::path fixture(std::string_view relative) {
  return std::filesystem::path(SPARKOPS_SOURCE_DIR) / "tests" / "fixtures" / relative;
}

std::filesystem::path shared_corpus(std::string_view relative) {
  return std::filesystem::path(SPARKOPS_SOURCE_DIR) / ".." / "shared" / "corpus" / relative;
}

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_text(const std::filesystem::path& path, std::string_view text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

TempDir::TempDir() {
  std::random_device rd;
  const auto base = std::filesystem::temp_directory_path();
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto candidate =
        base / ("sparkops-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    std::error_code ec;
    if (std::filesystem::create_directory(candidate, ec)) {
      path_ = candidate;
      return;
    }
  }
  ADD_FAILURE() << "cannot create a temp dir";
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

namespace {

void drain(int out_fd, int err_fd, std::string& out, std::string& err, int in_fd,
           std::string_view in_text) {
  std::array<pollfd, 3> fds{};
  std::size_t in_pos = 0;
  bool out_open = true, err_open = true, in_open = in_fd >= 0;
  char buf[65536];
  while (out_open || err_open) {
    int n = 0;
    if (out_open) fds[static_cast<std::size_t>(n++)] = {out_fd, POLLIN, 0};
    if (err_open) fds[static_cast<std::size_t>(n++)] = {err_fd, POLLIN, 0};
    if (in_open) fds[static_cast<std::size_t>(n++)] = {in_fd, POLLOUT, 0};
    if (::poll(fds.data(), static_cast<nfds_t>(n), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < n; ++i) {
      const auto& p = fds[static_cast<std::size_t>(i)];
      if (p.revents == 0) continue;
      if (p.fd == in_fd) {
        const ssize_t w = ::write(in_fd, in_text.data() + in_pos, in_text.size() - in_pos);
        if (w > 0) in_pos += static_cast<std::size_t>(w);
        if (w < 0 || in_pos >= in_text.size()) {
          ::close(in_fd);
          in_open = false;
        }
        continue;
      }
      const ssize_t r = ::read(p.fd, buf, sizeof buf);
      if (r > 0) {
        (p.fd == out_fd ? out : err).append(buf, static_cast<std::size_t>(r));
      } else {
        if (p.fd == out_fd)
          out_open = false;
        else
          err_open = false;
      }
    }
  }
  if (in_open) ::close(in_fd);
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& env,
                          std::string_view stdin_text) {
  static TempDir* const scratch_home =
      new TempDir();  // one empty HOME for every child of this test binary
  std::map<std::string, std::string> vars;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv(*e);
    const auto eq = kv.find('=');
    if (eq != std::string::npos) vars[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  vars["HOME"] = scratch_home->path().string();
  vars["XDG_CONFIG_HOME"] = (scratch_home->path() / "config").string();
  vars.erase("SPARKOPS_CONFIG");
  vars.erase("SPARKOPS_ROOT");
  vars.erase("COLUMNS");  // tables fit it: a test gives it explicitly when it means to
  vars["TZ"] = "UTC";
  for (const auto& [k, v] : env) {
    if (v.empty())
      vars.erase(k);
    else
      vars[k] = v;
  }
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : vars) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> argp;
  for (auto& s : args) argp.push_back(s.data());
  argp.push_back(nullptr);

  int out_pipe[2], err_pipe[2], in_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0 ||
      ::pipe2(in_pipe, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "pipe failed";
    return {};
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(in_pipe[0], 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    ::signal(SIGPIPE, SIG_DFL);
    ::execve(argp[0], argp.data(), envp.data());
    std::fprintf(stderr, "execve %s: %s\n", argp[0], std::strerror(errno));
    ::_exit(127);
  }
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  ::signal(SIGPIPE, SIG_IGN);
  ProcessResult result;
  drain(out_pipe[0], err_pipe[0], result.out, result.err, in_pipe[1], stdin_text);
  ::close(out_pipe[0]);
  ::close(err_pipe[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = exit_code_from_wait_status(status, -1);
  return result;
}

std::string sparkops_binary() {
  return std::string(SPARKOPS_BUILD_DIR) + "/src/cli/sparkops";
}

ProcessResult run_sparkops(const std::vector<std::string>& args,
                           const std::map<std::string, std::string>& env,
                           std::string_view stdin_text) {
  std::vector<std::string> argv{sparkops_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, env, stdin_text);
}

void expect_golden(std::string_view relative, std::string_view actual) {
  const auto path = fixture(relative);
  const char* update = std::getenv("SPARKOPS_UPDATE_GOLDEN");
  if (update != nullptr && std::string_view(update) == "1") {
    write_text(path, actual);
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(path))
      << "golden file " << path << " is missing; run with SPARKOPS_UPDATE_GOLDEN=1 to create it";
  EXPECT_EQ(slurp(path), actual) << "differs from golden " << path;
}

std::vector<std::map<std::string, std::string>> read_csv(const std::filesystem::path& path) {
  const std::string text = slurp(path);
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field.push_back('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field.push_back(c);
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(std::move(field));
      field.clear();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      rows.back().push_back(std::move(field));
      field.clear();
      rows.emplace_back();
    } else {
      field.push_back(c);
    }
  }
  if (!field.empty() || !rows.back().empty()) rows.back().push_back(std::move(field));
  std::vector<std::map<std::string, std::string>> out;
  if (rows.empty()) return out;
  const auto header = rows.front();
  for (std::size_t r = 1; r < rows.size(); ++r) {
    if (rows[r].empty() || (rows[r].size() == 1 && rows[r][0].empty())) continue;
    std::map<std::string, std::string> row;
    for (std::size_t k = 0; k < header.size() && k < rows[r].size(); ++k)
      row[header[k]] = rows[r][k];
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace sparkops::test

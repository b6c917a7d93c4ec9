// ServerProcess: see server_process.h.
#include "tests/http/server_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <thread>

#include <httplib.h>

extern char** environ;

namespace runledger::testing {
namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(25);
constexpr time_t kProbeTimeoutS = 2;

// The caller's environment without RUNLEDGER_* variables: the flags given
// are the whole configuration of the server under test.
std::vector<std::string> child_env() {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string_view(*e).substr(0, 10) != "RUNLEDGER_") env.emplace_back(*e);
  }
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

pid_t spawn(std::vector<std::string> argv, const std::string& out, const std::string& err) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  auto env = child_env();
  auto args = c_strings(argv);
  auto envp = c_strings(env);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0]);
  return pid;
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

ServerProcess::ServerProcess(std::string data, std::vector<std::string> flags, int port,
                             std::vector<std::string> launcher)
    : data_(std::move(data)), port_(port == 0 ? free_port() : port) {
  std::vector<std::string> argv = std::move(launcher);
  for (std::string arg : {bin_path("runledgerd"), std::string("--listen"),
                          "127.0.0.1:" + std::to_string(port_), std::string("--data"), data_}) {
    argv.push_back(std::move(arg));
  }
  argv.insert(argv.end(), flags.begin(), flags.end());
  pid_ = spawn(std::move(argv), logs_.path() + "/out", logs_.path() + "/err");
}

ServerProcess::~ServerProcess() {
  if (running()) kill_hard();
}

bool ServerProcess::wait_ready() {
  const auto deadline = std::chrono::steady_clock::now() + kReadyWait;
  httplib::Client probe("127.0.0.1", port_);
  probe.set_connection_timeout(kProbeTimeoutS);
  probe.set_read_timeout(kProbeTimeoutS);
  while (std::chrono::steady_clock::now() < deadline) {
    if (wait_exit(std::chrono::milliseconds(0))) return false;
    if (probe.Get("/v1/health")) return true;
    std::this_thread::sleep_for(kPollInterval);
  }
  return false;
}

std::optional<int> ServerProcess::wait_exit(std::chrono::milliseconds wait) {
  if (exit_code_ || pid_ <= 0) return exit_code_;
  const auto deadline = std::chrono::steady_clock::now() + wait;
  for (;;) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      exit_code_ = exit_code_of(status);
      return exit_code_;
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(kPollInterval);
  }
}

int ServerProcess::terminate() {
  if (!running()) return exit_code_.value_or(-1);
  ::kill(pid_, SIGTERM);
  if (auto code = wait_exit(kStopWait)) return *code;
  kill_hard();
  return -1;
}

void ServerProcess::kill_hard() {
  if (!running()) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  if (waitpid(pid_, &status, 0) == pid_) exit_code_ = exit_code_of(status);
}

std::string ServerProcess::log() const {
  std::ifstream in(logs_.path() + "/err", std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace runledger::testing

// ServerProcess: see server_process.h.
#include "tests/support/server_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdexcept>
#include <string_view>
#include <thread>

#include <httplib.h>

#include "tests/support/subprocess.h"

namespace runledger::testing {
namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(25);
constexpr time_t kProbeTimeoutS = 2;

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
  pid_ = spawn_process(argv, clean_environment(), logs_.path() + "/out", logs_.path() + "/err");
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

std::string ServerProcess::log() const { return read_whole_file(logs_.path() + "/err"); }

}  // namespace runledger::testing

// ServerProcess: a real `runledgerd` subprocess for the end-to-end HTTP,
// fault and CLI tests, listening on a free loopback port with its data in a
// given folder. The tests talk to it over sockets only, and stop it the way an operator
// or a crash would: SIGTERM (clean shutdown) or SIGKILL (power cut).
// Not thread-safe: one test thread owns it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/test_support.h"

namespace runledger::testing {

class ServerProcess {
 public:
  // How long a start may take on a loaded, shared machine before a test
  // gives up: far more than an idle machine needs.
  static constexpr std::chrono::seconds kReadyWait{60};
  static constexpr std::chrono::seconds kStopWait{30};

  // Starts `runledgerd --listen 127.0.0.1:<port> --data <data> <flags...>`;
  // `port` 0 picks a free one. Does not wait for it to serve. `launcher`, when
  // given, runs it (e.g. {"/usr/bin/prlimit", "--nofile=512"}); it must exec
  // runledgerd in its own process, so that signals reach the server.
  explicit ServerProcess(std::string data, std::vector<std::string> flags = {}, int port = 0,
                         std::vector<std::string> launcher = {});
  // Kills (SIGKILL) a server still running, so a failed test leaks nothing.
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // Waits until GET /v1/health gets any HTTP answer (a read-only server
  // answers 503 there). False when the process exits or kReadyWait passes.
  bool wait_ready();
  // Waits up to `wait` for the process to exit; its exit code (128 + signal
  // when killed by one), or nullopt while it still runs.
  std::optional<int> wait_exit(std::chrono::milliseconds wait);
  // SIGTERM, then waits (kStopWait) for the exit code; -1 when it had to be
  // killed because it did not stop.
  int terminate();
  // SIGKILL and reap: nothing gets a chance to flush.
  void kill_hard();
  bool running() const { return pid_ > 0 && !exit_code_; }

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  const std::string& data() const { return data_; }
  // What the server wrote on stderr so far.
  std::string log() const;

 private:
  std::string data_;
  int port_ = 0;
  TempDir logs_;
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
};

}  // namespace runledger::testing

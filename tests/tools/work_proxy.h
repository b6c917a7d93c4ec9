// A TCP forwarder on loopback between `runledger work` and a runledgerd that
// loses replies on demand: a request matched by a needle reaches the server
// and is acted on, but its reply is dropped and the client's connection
// closed, as a reply lost on the wire would be. For the lost-reply tests.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace runledger::testing {

class ReplyDroppingProxy {
 public:
  explicit ReplyDroppingProxy(int upstream_port);
  ~ReplyDroppingProxy();
  ReplyDroppingProxy(const ReplyDroppingProxy&) = delete;
  ReplyDroppingProxy& operator=(const ReplyDroppingProxy&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // The reply to each of the next `times` requests whose request line
  // (e.g. "POST /v1/jobs/j1/start HTTP/1.1") contains `needle` is dropped.
  void drop_replies(const std::string& needle, int times = 1);
  // How many replies were dropped so far.
  int dropped() const { return dropped_.load(); }

 private:
  void accept_loop();
  void serve(int client);
  bool take_drop(const std::string& request_line);

  int upstream_port_;
  int port_ = 0;
  int listen_fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::atomic<int> dropped_{0};
  std::mutex mu_;
  std::vector<std::pair<std::string, int>> drops_;  // REQUIRES: mu_
  std::vector<int> open_fds_;                       // REQUIRES: mu_
  std::vector<std::thread> threads_;                // REQUIRES: mu_
  std::thread acceptor_;
};

}  // namespace runledger::testing

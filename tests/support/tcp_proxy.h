// TcpProxy: a loopback TCP proxy for fault tests: it forwards every
// connection on its port to a target port, until the test cuts it. A cut
// closes every open connection (both ends see a reset) and refuses or drops
// new ones until restore(): a database or peer that became unreachable.
// Thread-safe; runs its own thread.
#pragma once

#include <memory>

namespace runledger::testing {

class TcpProxy {
 public:
  // Listens on a free 127.0.0.1 port and forwards to 127.0.0.1:target_port.
  explicit TcpProxy(int target_port);
  ~TcpProxy();
  TcpProxy(const TcpProxy&) = delete;
  TcpProxy& operator=(const TcpProxy&) = delete;

  int port() const;
  // Closes every connection and stops forwarding: new connections are
  // accepted and closed at once (`blackhole` false) or accepted and never
  // answered (`blackhole` true: a partition, where a client waits for its
  // own timeout).
  void cut(bool blackhole = false);
  // Forwards new connections again.
  void restore();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace runledger::testing

// ListenAddress: the server's address, taken before anything else is done.
//
// Why: a second server on a port in use must fail at once, saying why
// (docs/operations.md), not after it created its data folder, replayed its log and
// recorded missed schedule slots in it. The socket is bound here but does
// not listen: until the server is ready a client's connection is refused,
// as start-up accepts no request before the state is rebuilt. Server::bind()
// takes the socket over and listens on it.
// Not thread-safe; movable, closes the socket unless handed over.
#pragma once

#include <string>

#include "base/status.h"

namespace runledger::http {

class ListenAddress {
 public:
  ListenAddress() = default;
  ~ListenAddress();
  ListenAddress(ListenAddress&& other) noexcept;
  ListenAddress& operator=(ListenAddress&& other) noexcept;
  ListenAddress(const ListenAddress&) = delete;
  ListenAddress& operator=(const ListenAddress&) = delete;

  // Binds a TCP socket to host:port (port 0: one the kernel picks), with
  // SO_REUSEADDR only (SO_REUSEPORT would let a second server share it).
  static Status take(const std::string& host, int port, ListenAddress* out);

  // The bound socket, now the caller's to close; -1 when there is none.
  int release();

 private:
  int fd_ = -1;
};

}  // namespace runledger::http

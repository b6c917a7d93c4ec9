// Server: the HTTP facade, event-driven on Boost.Asio. One loop thread
// serves every socket (http/connection.h): a request that is a command goes
// from the socket to the engine and its durable reply back to the socket
// without a thread waiting for it, so a thread wakes once for many replies
// (the engine completes a whole group commit at once) instead of once for
// each.
//
// Limits are deliberate:
//  - SO_REUSEPORT is off, so a second server on the same port fails to bind;
//  - request bodies, request lines and headers are bounded by the parser
//    (413, 414, 431), chunked bodies too;
//  - a request must arrive whole within the read timeout, so slow clients
//    hold a socket, never a thread;
//  - past `connections_max` open sockets new ones are answered 503 and
//    closed; handlers that wait run on `threads` threads with a bounded
//    queue, beyond which they are answered 503 at once.
// Thread-safe: stop() may be called from any thread (e.g. a signal watcher).
#pragma once

#include <memory>

#include "base/status.h"
#include "engine/engine.h"
#include "http/server_options.h"

namespace runledger::http {

class Server {
 public:
  Server(Engine& engine, ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds the socket (or takes over options.listen_fd) and listens on it;
  // fails (with the reason) when the address is taken.
  Status bind();
  // Serves until stop(). REQUIRES: bind() succeeded.
  void serve();
  // Stops taking connections, lets the requests in flight get their
  // replies (for a bounded time), then stops the loop. Idempotent.
  void stop();
  // Reads the tokens file and the TLS files again (SIGHUP): requests and
  // connections from then on use them; open connections keep their TLS
  // session. On an error nothing changes and the error says why. Any thread;
  // REQUIRES: serve() is running.
  Status reload();
  int port() const { return port_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace runledger::http

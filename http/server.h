// Server: the HTTP facade on cpp-httplib. Owns the listening socket, a
// bounded worker pool, the limits (body size, timeouts, connections) and the
// live event stream; everything else is delegated to the Router's handlers.
//
// Limits are deliberate (cpp-httplib 0.11's defaults are not safe here):
//  - SO_REUSEPORT is off, so a second server on the same port fails to bind;
//  - request bodies are read through a bounded reader, chunked ones too;
//  - `threads` handle connections, growing to 4x while connections wait;
//    past `queue_max` waiting connections, new ones are answered 503 at
//    once by a small overflow pool;
//  - read/write timeouts bound each read and write. They do not bound a
//    whole request (cpp-httplib 0.11 has no such deadline), so a client
//    sending a byte every few seconds holds its thread: the growth of the
//    pool is what keeps a few such clients from starving the others.
// Thread-safe: stop() may be called from any thread (e.g. a signal watcher).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "engine/engine.h"
#include "events/status.h"
#include "http/routes.h"

namespace runledger::http {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;
  size_t threads = 128;
  size_t queue_max = 1024;  // connections waiting for a thread
  size_t body_limit_bytes = 1 << 20;
  int read_timeout_ms = 5000;
  int write_timeout_ms = 5000;
  int keep_alive_timeout_s = 5;
  size_t keep_alive_requests_max = 100000;
  size_t live_streams_max = 16;  // concurrent /v1/events/live readers
  std::string auth_tokens_path;  // empty: no authentication (loopback only)
  ApiOptions api;
};

class Server {
 public:
  Server(Engine& engine, ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds the socket; fails (with the reason) when the address is taken.
  Status bind();
  // Serves until stop(). REQUIRES: bind() succeeded.
  void serve();
  void stop();
  int port() const { return port_; }

 private:
  struct Impl;
  void widen_backlog();
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace runledger::http

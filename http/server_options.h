// ServerOptions: the HTTP server's address and limits (docs/api.md, Limits).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "http/console.h"
#include "http/routes.h"
#include "http/tls_context.h"

namespace runledger::http {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;
  // A socket bound to host:port by ListenAddress::take() ahead of the
  // server, which then takes it over (closes it); -1: bind() binds one.
  int listen_fd = -1;
  // Threads that run the handlers which wait (reads, scans, live streams).
  size_t threads = 128;
  size_t queue_max = 1024;  // such requests waiting for a thread; beyond: 503
  // Open connections served; beyond this a connection gets 503 and is
  // closed, and far beyond it is closed at once.
  size_t connections_max = 4096;
  size_t body_limit_bytes = 1 << 20;
  // Reply bytes handed to sockets and not yet taken by their clients; while
  // over it, reads are refused with 503 and Retry-After (docs/operations.md).
  size_t reply_bytes_max = 256 << 20;
  int read_timeout_ms = 5000;   // from the first byte of a request to its end
  int write_timeout_ms = 5000;  // from the last bytes of a reply the client took
  // Each connection's socket send buffer; 0: the kernel's, which grows to
  // megabytes on its own. Tests set it small, so that a reply outgrows it.
  size_t send_buffer_bytes = 0;
  int keep_alive_timeout_s = 5;
  size_t keep_alive_requests_max = 100000;
  size_t live_streams_max = 4096;  // concurrent /v1/events/live readers; beyond: 503
  // What one client address may hold at once (ClientLimits; 0: no cap).
  size_t connections_per_client_max = 1024;   // beyond: closed at once
  size_t live_streams_per_client_max = 1024;  // beyond: 503
  size_t waiting_claims_max = 4096;           // claims waiting for work (wait_s); beyond: 503
  std::string auth_tokens_path;               // empty: no authentication (loopback only)
  // HTTPS when tls.cert is set (docs/operations.md "TLS").
  TlsFiles tls;
  // The web console's files at /ui/; nullptr: no console (/ui/ is 404).
  std::shared_ptr<const Console> console;
  ApiOptions api;
};

}  // namespace runledger::http

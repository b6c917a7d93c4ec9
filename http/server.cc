#include "http/server.h"

#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <future>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "http/connection.h"
#include "http/listen_address.h"
#include "http/server_context.h"
#include "http/tls_context.h"

namespace runledger::http {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

// Sockets beyond connections_max are still answered 503, up to this many
// more; past that they are closed at once.
constexpr size_t kRefusedConnectionsMax = 256;
// After accept() failed for want of file descriptors.
constexpr auto kAcceptRetry = std::chrono::milliseconds(100);
// How long a stop waits for replies in flight.
constexpr auto kStopWait = std::chrono::seconds(10);

// File descriptors kept for everything but connections (the store's files,
// the log, the listening socket).
constexpr size_t kFilesReserved = 256;

// Every connection holds a file descriptor: lifts the soft limit to the hard
// one, and returns how many connections fit under it (answered or refused
// with 503), so that the connections beyond are never accepted only to wait
// for a descriptor.
size_t connections_that_fit(size_t wanted) {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return wanted;
  if (lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0) getrlimit(RLIMIT_NOFILE, &lim);
  }
  if (lim.rlim_cur == RLIM_INFINITY) return wanted;
  const size_t files = static_cast<size_t>(lim.rlim_cur);
  const size_t room = files > 2 * kFilesReserved ? files - kFilesReserved : files / 2;
  return std::min(wanted, room);
}

}  // namespace

struct Server::Impl {
  Engine& engine;
  const ServerOptions options;
  Router router;
  Auth auth;
  BlockingPool pool;
  ServerContext ctx;
  // The loop and what lives on it are destroyed before the members above:
  // the connections its handlers still hold point to them. The loop runs on
  // one thread, and the scheduler is told so: the handlers that thread
  // queues for itself then skip its lock, and a connection needs no strand
  // (a strand queues and locks for each handler it runs). One loop thread
  // keeps the engine busy on a small machine and leaves its cores to the
  // sequencer and the writer.
  asio::io_context io{1};
  LoopInbox replies{io};
  ClaimWaiters claims{io, engine, options.waiting_claims_max};
  LiveStreams live{io, engine, pool, ctx.in_flight, options.live_streams_max};
  tcp::acceptor acceptor{io};
  asio::steady_timer accept_retry{io};
  // Keeps the loop running when no socket is open, until stop() ends it:
  // the replies still in flight then have a loop to be written on.
  asio::executor_work_guard<asio::io_context::executor_type> keep_running{io.get_executor()};
  // Connections served at once, the last `refused_room` of them only to be
  // answered 503 (set by bind() from the open files limit).
  size_t connections_fit = 0;
  size_t refused_room = 0;
  // The TLS context new connections take (nullptr: plain HTTP); replaced
  // on the loop by reload().
  std::shared_ptr<asio::ssl::context> tls;
  std::atomic<bool> serving{false};
  std::atomic<bool> stopped{false};

  Impl(Engine& e, ServerOptions o)
      : engine(e),
        options(std::move(o)),
        pool(options.threads, options.queue_max),
        ctx(e, options, router, auth, pool) {
    ctx.replies = &replies;
    ctx.claims = &claims;
    ctx.live = &live;
    add_job_routes(router, engine, options.api);
    add_connector_routes(router, engine);
    add_hold_routes(router, engine);
    add_event_routes(router, engine);
    add_ops_routes(router, engine, options.api, live, claims, ctx.counters);
  }

  void accept();
};

void Server::Impl::accept() {
  acceptor.async_accept(io.get_executor(), [this](error_code ec, tcp::socket socket) {
    if (!acceptor.is_open()) return;
    if (ec) {
      // Out of file descriptors (or another passing failure): wait a moment
      // instead of spinning; the connections that close free some.
      accept_retry.expires_after(kAcceptRetry);
      accept_retry.async_wait([this](error_code wait_ec) {
        if (!wait_ec) accept();
      });
      return;
    }
    const size_t open = ctx.connections.load(std::memory_order_relaxed);
    error_code peer_ec;
    std::string address = socket.remote_endpoint(peer_ec).address().to_string();
    if (peer_ec) address.clear();  // gone already: the connection fails at once
    if (open < connections_fit && !ctx.clients.take_connection(address)) {
      // Closed at once: answering would mean reading what may be a slow
      // request, the very thing the cap is against.
      ctx.counters.refused(HttpCounters::Refusal::kClientConnections);
    } else if (open < connections_fit) {
      const bool refuse = open + refused_room >= connections_fit;
      std::make_shared<Connection>(ctx, std::move(socket), tls, refuse, std::move(address))
          ->start();
    } else {
      ctx.counters.refused(HttpCounters::Refusal::kConnections);
    }  // the socket closes as it goes out of scope
    accept();
  });
}

Server::Server(Engine& engine, ServerOptions options)
    : impl_(std::make_unique<Impl>(engine, std::move(options))) {}

Server::~Server() {
  stop();
  impl_->pool.shutdown();  // before the loop goes: its tasks post to the loop
}

Status Server::bind() {
  const auto& o = impl_->options;
  if (!o.auth_tokens_path.empty()) {
    Status st = impl_->auth.load(o.auth_tokens_path);
    if (!st.ok()) {
      if (o.listen_fd >= 0) ::close(o.listen_fd);
      return st;
    }
  }
  if (o.tls.enabled()) {
    Status st = make_tls_context(o.tls, &impl_->tls);
    if (!st.ok()) {
      if (o.listen_fd >= 0) ::close(o.listen_fd);
      return st;
    }
  }
  impl_->ctx.site.local_host_only = !impl_->auth.enabled();
  impl_->ctx.site.listen_host = o.host;
  impl_->connections_fit = connections_that_fit(o.connections_max + kRefusedConnectionsMax);
  impl_->refused_room = std::min(kRefusedConnectionsMax, impl_->connections_fit / 8);
  const std::string where = o.host + ":" + std::to_string(o.port);
  int fd = o.listen_fd;
  if (fd < 0) {
    ListenAddress own;
    if (Status s = ListenAddress::take(o.host, o.port, &own); !s.ok()) return s;
    fd = own.release();
  }
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  error_code ec;
  auto& acceptor = impl_->acceptor;
  acceptor.assign(addr.ss_family == AF_INET6 ? tcp::v6() : tcp::v4(), fd, ec);
  if (ec) {
    ::close(fd);
    return Status::IoError("cannot listen on " + where + ": " + ec.message());
  }
  acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    error_code ignored;
    acceptor.close(ignored);
    // Bound, but another socket on the port started listening first.
    return Status::IoError("cannot listen on " + where + ": " + ec.message() +
                           " (is another server using this port?)");
  }
  port_ = acceptor.local_endpoint().port();
  return Status::Ok();
}

void Server::serve() {
  if (impl_->stopped) return;
  impl_->serving = true;
  impl_->accept();
  impl_->io.run();
}

Status Server::reload() {
  Impl& s = *impl_;
  const ServerOptions& o = s.options;
  Auth tokens;
  if (!o.auth_tokens_path.empty()) {
    if (Status st = tokens.load(o.auth_tokens_path); !st.ok()) return st;
  }
  std::shared_ptr<asio::ssl::context> tls;
  if (o.tls.enabled()) {
    if (Status st = make_tls_context(o.tls, &tls); !st.ok()) return st;
  }
  // Swapped on the loop, the only thread that reads them.
  auto swapped = std::make_shared<std::promise<void>>();
  auto done = swapped->get_future();
  asio::post(s.io, [&s, swapped, tokens = std::move(tokens), tls = std::move(tls)]() mutable {
    s.auth = std::move(tokens);
    s.tls = std::move(tls);
    swapped->set_value();
  });
  if (done.wait_for(kStopWait) != std::future_status::ready) {
    return Status::Unavailable("the server's loop did not take the reload");
  }
  return Status::Ok();
}

void Server::stop() {
  Impl& s = *impl_;
  if (s.stopped.exchange(true)) return;
  s.ctx.stopping = true;
  s.live.stop();
  asio::post(s.io, [&s] {
    error_code ec;
    s.acceptor.close(ec);
    s.accept_retry.cancel();
    s.claims.stop();
  });
  // Replies in flight are in the inbox, its drain queued on the loop, before
  // their count drops. The drain hands each to its connection's executor,
  // which may queue it once more, and the loop starts writing a reply as soon
  // as it runs that handler: once a marker has gone round the loop twice
  // after them, they are on their way.
  if (s.ctx.in_flight.close_and_wait_idle(kStopWait) && s.serving) {
    auto marker = std::make_shared<std::promise<void>>();
    auto passed = marker->get_future();
    asio::post(s.io, [&s, marker] { asio::post(s.io, [marker] { marker->set_value(); }); });
    passed.wait_for(kStopWait);
  }
  s.io.stop();
}

}  // namespace runledger::http

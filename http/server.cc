#include "http/server.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include <httplib.h>

#include "http/auth.h"
#include "http/handler_support.h"
#include "http/live_stream.h"
#include "http/router.h"

namespace runledger::http {
namespace {

constexpr size_t kOverflowThreads = 2;
// The pool grows to this many times --http-threads while connections wait.
constexpr size_t kThreadsGrowthFactor = 4;
constexpr size_t kActorBytesMax = 128;

// Set on the overflow pool's threads: requests there are answered 503 at once.
thread_local bool t_overflow = false;

// The connection threads: `threads` to start with, one more whenever a
// connection arrives while none is idle, up to `threads_max` (so a few slow
// clients cannot take every thread), then a bounded queue. Connections
// beyond the queue go to a small overflow pool that answers 503 and closes,
// so a burst is refused cleanly instead of waiting without bound.
class BoundedPool final : public httplib::TaskQueue {
 public:
  BoundedPool(size_t threads, size_t threads_max, size_t queue_max)
      : threads_max_(std::max(threads, threads_max)), queue_max_(queue_max) {
    std::lock_guard<std::mutex> lk(mu_);
    for (size_t i = 0; i < threads; ++i) add_worker();
    for (size_t i = 0; i < kOverflowThreads; ++i) {
      workers_.emplace_back([this] { work(overflow_, true); });
    }
  }
  void enqueue(std::function<void()> fn) override {
    {
      std::lock_guard<std::mutex> lk(mu_);
      const bool all_busy = idle_ <= main_.jobs.size();
      if (all_busy && main_workers_ < threads_max_ && !stop_) add_worker();
      auto& q = main_.jobs.size() < queue_max_ ? main_ : overflow_;
      q.jobs.push_back(std::move(fn));
    }
    main_.cv.notify_one();
    overflow_.cv.notify_one();
  }
  void shutdown() override {
    std::vector<std::thread> workers;
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
      workers.swap(workers_);
    }
    main_.cv.notify_all();
    overflow_.cv.notify_all();
    for (auto& t : workers) t.join();
  }

 private:
  struct Queue {
    std::deque<std::function<void()>> jobs;
    std::condition_variable cv;
  };
  // REQUIRES: mu_ held.
  void add_worker() {
    ++main_workers_;
    ++idle_;
    workers_.emplace_back([this] { work(main_, false); });
  }
  void work(Queue& q, bool overflow) {
    t_overflow = overflow;
    for (;;) {
      std::function<void()> fn;
      {
        std::unique_lock<std::mutex> lk(mu_);
        q.cv.wait(lk, [&] { return stop_ || !q.jobs.empty(); });
        if (q.jobs.empty()) return;
        fn = std::move(q.jobs.front());
        q.jobs.pop_front();
        if (!overflow) --idle_;
      }
      fn();
      if (!overflow) {
        std::lock_guard<std::mutex> lk(mu_);
        ++idle_;
      }
    }
  }
  const size_t threads_max_;
  const size_t queue_max_;
  std::mutex mu_;
  Queue main_, overflow_;
  size_t main_workers_ = 0;  // GUARDED_BY(mu_)
  size_t idle_ = 0;          // GUARDED_BY(mu_): main workers waiting for a job
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

bool printable(std::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x21 || static_cast<unsigned char>(c) > 0x7e) return false;
  }
  return true;
}

void send(httplib::Response& res, const Reply& r) {
  res.status = r.status;
  if (!r.body.empty()) res.set_content(r.body, r.content_type.c_str());
}

}  // namespace

struct Server::Impl {
  Engine& engine;
  ServerOptions options;
  httplib::Server http;
  Router router;
  LiveStreams live;
  Auth auth;
  int listen_fd = -1;  // the listening socket, once bound

  Impl(Engine& e, ServerOptions o)
      : engine(e), options(std::move(o)), live(e, options.live_streams_max) {
    add_job_routes(router, engine, options.api);
    add_connector_routes(router, engine);
    add_hold_routes(router, engine);
    add_event_routes(router, engine);
    add_ops_routes(router, engine);
    configure();
  }

  void configure();
  void handle(const httplib::Request& req, httplib::Response& res,
              const httplib::ContentReader* reader);
  std::optional<Reply> read_headers(const httplib::Request& req, ApiRequest& a);
};

void Server::Impl::configure() {
  // Only SO_REUSEADDR: with the library's default SO_REUSEPORT a second
  // server would bind the same port silently and share the traffic.
  http.set_socket_options([this](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    listen_fd = sock;
  });
  http.new_task_queue = [this] {
    return new BoundedPool(options.threads, options.threads * kThreadsGrowthFactor,
                           options.queue_max);
  };
  http.set_tcp_nodelay(true);
  http.set_keep_alive_max_count(options.keep_alive_requests_max);
  http.set_keep_alive_timeout(options.keep_alive_timeout_s);
  http.set_read_timeout(options.read_timeout_ms / 1000, (options.read_timeout_ms % 1000) * 1000);
  http.set_write_timeout(options.write_timeout_ms / 1000, (options.write_timeout_ms % 1000) * 1000);
  http.set_payload_max_length(options.body_limit_bytes);
  // Errors the library answers itself (bad request line, 413 on a large
  // Content-Length, 414) still get the API's JSON error shape.
  http.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return;
    const char* code = res.status == 413   ? "body_too_large"
                       : res.status == 404 ? "not_found"
                                           : "bad_request";
    std::string msg = res.status == 413   ? "the body is larger than the configured limit"
                      : res.status == 404 ? "no such route"
                                          : "the request could not be read";
    res.set_content(Reply::error(res.status, code, msg).body, "application/json");
  });
  http.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        res.status = 500;
        res.set_content(Reply::error(500, "internal_error", "the request failed").body,
                        "application/json");
      });
  auto with_body = [this](const httplib::Request& req, httplib::Response& res,
                          const httplib::ContentReader& reader) { handle(req, res, &reader); };
  auto without_body = [this](const httplib::Request& req, httplib::Response& res) {
    handle(req, res, nullptr);
  };
  const std::string any = ".*";
  http.Get(any, without_body);
  http.Post(any, with_body);
  http.Post(any, without_body);
  http.Patch(any, with_body);
  http.Patch(any, without_body);
  http.Delete(any, with_body);
  http.Delete(any, without_body);
  http.Put(any, with_body);
  http.Put(any, without_body);
}

std::optional<Reply> Server::Impl::read_headers(const httplib::Request& req, ApiRequest& a) {
  if (auth.enabled() && a.path != "/v1/health") {
    auto who = auth.authenticate(req.get_header_value("Authorization"));
    if (!who) {
      return Reply::error(401, "unauthorized",
                          "a valid bearer token is required (Authorization: Bearer <token>)");
    }
    if (!allowed(who->role, a.method, a.path)) {
      return Reply::error(403, "forbidden",
                          "token '" + who->name + "' may not " + a.method + " " + a.path);
    }
    a.actor = who->name;  // the token's name is the actor, whatever headers say
  } else if (req.has_header("X-Runledger-Actor")) {
    std::string actor = req.get_header_value("X-Runledger-Actor");
    if (actor.empty() || actor.size() > kActorBytesMax || !printable(actor)) {
      return Reply::error(422, "invalid_field",
                          "header X-Runledger-Actor must be 1-128 printable characters",
                          {{"field", "X-Runledger-Actor"}});
    }
    a.actor = std::move(actor);
  }
  if (req.has_header("Idempotency-Key")) {
    std::string key = req.get_header_value("Idempotency-Key");
    if (key.empty() || key.size() > 128 || !printable(key)) {
      return Reply::error(422, "invalid_field",
                          "header Idempotency-Key must be 1-128 printable characters",
                          {{"field", "Idempotency-Key"}});
    }
    a.idempotency_key = std::move(key);
  }
  a.last_event_id = req.get_header_value("Last-Event-ID");
  return std::nullopt;
}

void Server::Impl::handle(const httplib::Request& req, httplib::Response& res,
                          const httplib::ContentReader* reader) {
  if (t_overflow) {
    res.set_header("Connection", "close");
    return send(res, Reply::error(503, "overloaded", "too many connections; retry later"));
  }
  ApiRequest a;
  a.method = req.method;
  a.path = req.target.substr(0, req.target.find('?'));
  for (const auto& [k, v] : req.params) a.query.emplace(k, v);
  // A POST without Content-Length and not chunked has no body (the library
  // would fail reading it): treat it as empty.
  const bool chunked =
      req.get_header_value("Transfer-Encoding").find("chunked") != std::string::npos;
  if (reader != nullptr && (chunked || req.has_header("Content-Length"))) {
    bool too_large = false;
    const size_t limit = options.body_limit_bytes;
    if (req.has_header("Content-Length") &&
        std::strtoull(req.get_header_value("Content-Length").c_str(), nullptr, 10) > limit) {
      too_large = true;
    } else {
      bool ok = (*reader)([&](const char* data, size_t n) {
        if (a.body.size() + n > limit) {
          too_large = true;
          return false;
        }
        a.body.append(data, n);
        return true;
      });
      if (!ok && !too_large) {
        res.set_header("Connection", "close");
        return send(res, Reply::error(400, "bad_request", "the body could not be read"));
      }
    }
    if (too_large) {
      // The rest of the body is never read: close rather than parse it.
      res.set_header("Connection", "close");
      return send(res, Reply::error(413, "body_too_large",
                                    "the body is larger than the limit of " +
                                        std::to_string(limit) + " bytes"));
    }
  }
  // Checked after the body was read, so a refusal never leaves unread body
  // bytes on a keep-alive connection.
  if (auto early = read_headers(req, a)) return send(res, *early);
  if (a.method == "GET" && a.path == "/v1/events/live") {
    return live.serve(a, res);
  }
  const Router::Handler* handler = nullptr;
  switch (router.route(a, &handler)) {
    case Router::Match::kNoPath:
      return send(res, Reply::error(404, "not_found", "no such route: " + a.path));
    case Router::Match::kNoMethod:
      return send(
          res, Reply::error(405, "method_not_allowed", a.method + " is not allowed on " + a.path));
    case Router::Match::kFound:
      break;
  }
  try {
    send(res, (*handler)(a));
  } catch (const ApiError& e) {
    send(res, api_error_reply(e));
  } catch (const FieldError& e) {
    send(res, field_error_reply(e));
  } catch (const std::exception& e) {
    send(res, Reply::error(500, "internal_error", std::string("the request failed: ") + e.what()));
  }
}

Server::Server(Engine& engine, ServerOptions options)
    : impl_(std::make_unique<Impl>(engine, std::move(options))) {}

Server::~Server() { stop(); }

Status Server::bind() {
  const auto& o = impl_->options;
  if (!o.auth_tokens_path.empty()) {
    Status st = impl_->auth.load(o.auth_tokens_path);
    if (!st.ok()) return st;
  }
  if (o.port == 0) {
    port_ = impl_->http.bind_to_any_port(o.host);
    if (port_ <= 0) return Status::IoError("cannot listen on " + o.host + ": " + strerror(errno));
    widen_backlog();
    return Status::Ok();
  }
  if (!impl_->http.bind_to_port(o.host, o.port)) {
    int err = errno;
    return Status::IoError("cannot listen on " + o.host + ":" + std::to_string(o.port) + ": " +
                           (err ? strerror(err) : "bind failed") +
                           " (is another server using this port?)");
  }
  port_ = o.port;
  widen_backlog();
  return Status::Ok();
}

void Server::widen_backlog() {
  // The library listens with a backlog of 5: in a burst the kernel then
  // drops connections the client already believes open, which hang with no
  // reply. Listening again on the bound socket raises the backlog.
  if (impl_->listen_fd >= 0) ::listen(impl_->listen_fd, SOMAXCONN);
}

void Server::serve() { impl_->http.listen_after_bind(); }

void Server::stop() {
  impl_->live.stop();
  impl_->http.stop();
}

}  // namespace runledger::http

#include "http/connection.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "base/free_memory.h"
#include "http/console.h"
#include "http/cross_site.h"
#include "http/handler_support.h"
#include "http/request_entry.h"
#include "http/response_head.h"

namespace runledger::http {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

// The input buffer starts small, so thousands of idle keep-alive sockets
// cost little, and doubles while an incomplete line fills it, up to the
// most it must hold: one incomplete line, which the parser refuses before
// it passes its limits (16 KiB).
constexpr size_t kInputBytesFirst = 4 * 1024;
constexpr size_t kInputBytesMax = 32 * 1024;
// How long a closing socket still takes (and drops) what its client sends.
constexpr int kLingerMs = 2000;
// A reply body's buffer larger than this is freed once written.
constexpr size_t kBodyBytesKeptMax = 64 * 1024;

ParserLimits limits_for(const ServerOptions& o) {
  ParserLimits l;
  l.body_bytes_max = o.body_limit_bytes;
  return l;
}

// What a request gets once a stop has begun: nothing of it runs.
Reply shutting_down() {
  return Reply::error(503, "unavailable", "the server is shutting down; retry elsewhere or later");
}

// The reply to a request that could not be read, in the API's error shape.
Reply unreadable_reply(const RequestParser& p, size_t body_limit) {
  switch (p.error_status()) {
    case 413:
      return Reply::error(
          413, "body_too_large",
          "the body is larger than the limit of " + std::to_string(body_limit) + " bytes");
    case 414:
      return Reply::error(414, "uri_too_long", p.error_message());
    case 431:
      return Reply::error(431, "headers_too_large", p.error_message());
    case 501:
      return Reply::error(501, "not_implemented", p.error_message());
    case 505:
      return Reply::error(505, "http_version_not_supported", p.error_message());
    default:
      return Reply::error(400, "bad_request", p.error_message());
  }
}

}  // namespace

Connection::Connection(ServerContext& ctx, asio::ip::tcp::socket socket,
                       std::shared_ptr<asio::ssl::context> tls, bool refuse, std::string address)
    : ctx_(ctx),
      socket_(std::move(socket), std::move(tls)),
      timer_(socket_.get_executor()),
      refuse_(refuse),
      input_(kInputBytesFirst),
      parser_(limits_for(ctx.options)),
      address_(std::move(address)) {
  ctx_.connections.fetch_add(1, std::memory_order_relaxed);
}

Connection::~Connection() {
  uncount_reply_bytes();
  if (holds_stream_slot_) ctx_.clients.release_stream(address_);
  ctx_.clients.release_connection(address_);
  ctx_.connections.fetch_sub(1, std::memory_order_relaxed);
}

void Connection::start() {
  error_code ec;
  socket_.lowest_layer().set_option(asio::ip::tcp::no_delay(true), ec);
  if (ctx_.options.send_buffer_bytes > 0) {
    socket_.lowest_layer().set_option(
        asio::socket_base::send_buffer_size(static_cast<int>(ctx_.options.send_buffer_bytes)), ec);
  }
  // A TLS handshake counts as the first request's reading.
  arm(ctx_.options.read_timeout_ms);
  socket_.async_start([self = shared_from_this()](error_code start_ec) {
    if (start_ec || self->closed_) return self->close();
    self->read_more();
  });
}

void Connection::read_more() {
  if (closed_) return;
  if (begin_ > 0) {
    std::memmove(input_.data(), input_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == input_.size()) {
    if (input_.size() == kInputBytesMax) return close();  // beyond the parser's limits
    input_.resize(input_.size() * 2);
  }
  socket_.async_read_some(asio::buffer(input_.data() + end_, input_.size() - end_),
                          [self = shared_from_this()](error_code ec, size_t n) {
                            if (ec || self->closed_) return self->close();
                            self->end_ += n;
                            self->parse();
                          });
}

void Connection::parse() {
  const bool was_started = parser_.started();
  begin_ += parser_.feed(input_.data() + begin_, end_ - begin_);
  // The whole request must arrive within the read timeout of its first byte.
  if (!was_started && parser_.started()) arm(ctx_.options.read_timeout_ms);
  switch (parser_.state()) {
    case RequestParser::State::kNeedMore:
      if (parser_.headers_complete() && parser_.request().expect_continue && !continue_sent_) {
        return send_continue();
      }
      return read_more();
    case RequestParser::State::kError:
      keep_alive_ = false;
      http10_ = false;
      head_only_ = false;
      if (parser_.error_status() == 413 && parser_.headers_complete()) return refuse_oversized();
      return send(unreadable_reply(parser_, ctx_.options.body_limit_bytes));
    case RequestParser::State::kDone:
      return dispatch();
  }
}

void Connection::send_continue() {
  continue_sent_ = true;
  static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
  asio::async_write(socket_, asio::buffer(kContinue.data(), kContinue.size()),
                    [self = shared_from_this()](error_code ec, size_t) {
                      if (ec) return self->close();
                      self->read_more();
                    });
}

void Connection::dispatch() {
  disarm();
  ParsedRequest& in = parser_.request();
  ++served_;
  keep_alive_ = in.keep_alive && !refuse_ && served_ < ctx_.options.keep_alive_requests_max &&
                !ctx_.stopping.load(std::memory_order_relaxed);
  http10_ = in.version_minor == 0;
  head_only_ = in.method == "HEAD";
  if (refuse_) {
    ctx_.counters.refused(HttpCounters::Refusal::kConnections);
    return send(Reply::error(503, "overloaded", "too many connections; retry later"));
  }

  api_ = ApiRequest{};
  read_seq_.reset();
  long_poll_.reset();
  waiting_id_ = 0;
  api_.method = head_only_ ? "GET" : in.method;
  read_target(in.target, api_);
  api_.body = std::move(in.body);
  if (auto refused = check_host_fields(in)) return send(std::move(*refused));
  if (auto refused = refuse_cross_site(in.headers, in.method, api_.body.size(), ctx_.site)) {
    return send(std::move(*refused));
  }
  // The console's files hold no data: served without a token.
  if (ctx_.options.console && console_path(api_.path)) return serve_console();
  if (auto early = read_api_headers(in.headers, ctx_.auth.enabled() ? &ctx_.auth : nullptr, api_)) {
    if (early->status == 401) ctx_.counters.refused(HttpCounters::Refusal::kAuthentication);
    if (early->status == 403) ctx_.counters.refused(HttpCounters::Refusal::kForbidden);
    return send(std::move(*early));
  }
  if (api_.method == "GET") read_seq_ = ctx_.engine.store().last_seq();
  const Router::Route* route = nullptr;
  if (auto refused = find_route(ctx_.router, api_, &route)) {
    // A 4xx first reply is kept under the request's Idempotency-Key, whoever made it.
    if (auto kept = keep_under_key(api_, *refused, /*body_over_limit=*/false)) {
      return submit(std::move(*kept));
    }
    return send(std::move(*refused));
  }
  if (route->streams) {
    // HEAD learns that the stream is there without opening one.
    if (head_only_) return send(Reply{200, "", "text/event-stream"});
    return open_live_stream();
  }
  if (!route->may_block) {
    Answer a = run_handler(*route, api_);
    if (a.long_poll && a.command) {
      route_ = route;
      long_poll_ = std::move(a.long_poll);
      wait_deadline_ = std::chrono::steady_clock::now() + long_poll_->wait;
    }
    return answer(std::move(a));
  }

  // Replies not yet taken by their clients are over budget: a read, which
  // may build megabytes, waits for them to drain (docs/operations.md, Limits).
  // Health and metrics are small, and must answer under load.
  if (ctx_.counters.reply_bytes() > ctx_.options.reply_bytes_max && api_.path != "/v1/health" &&
      api_.path != "/metrics") {
    ctx_.counters.refused(HttpCounters::Refusal::kReplyBytes);
    Reply busy = Reply::error(503, "overloaded",
                              "too many reply bytes are waiting for their clients; retry later");
    busy.headers = "Retry-After: 1\r\n";
    return send(std::move(busy));
  }
  if (!ctx_.in_flight.try_add()) return send(shutting_down());
  bool queued = ctx_.pool.post([self = shared_from_this(), route]() mutable {
    ServerContext& ctx = self->ctx_;
    // Its client left while it waited for a thread: nothing to build.
    if (self->client_gone()) {
      ctx.counters.dropped();
      auto* c = self.get();
      asio::post(c->socket_.get_executor(), [self = std::move(self)] { self->close(); });
      ctx.in_flight.done();
      return;
    }
    Answer a = run_handler(*route, self->api_);
    if (a.command) {
      self->submit(std::move(*a.command), /*admitted=*/true);
    } else {
      auto* c = self.get();
      asio::post(c->socket_.get_executor(),
                 [self = std::move(self), r = std::move(*a.reply)]() mutable {
                   self->send(std::move(r));
                 });
    }
    // Last: a stop waits for this, and nothing here may touch the server after it.
    ctx.in_flight.done();
  });
  if (!queued) {
    ctx_.in_flight.done();
    ctx_.counters.refused(HttpCounters::Refusal::kQueue);
    send(Reply::error(503, "overloaded", "too many requests are waiting; retry later"));
  }
}

bool Connection::client_gone() {
  // Called where no operation of the loop is pending on the socket. A peek
  // consumes nothing: a pipelined request stays for the parser.
  char byte = 0;
  const ssize_t n =
      ::recv(socket_.lowest_layer().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n == 0) return true;  // the client closed its side
  return n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
}

void Connection::serve_console() {
  const Console& console = *ctx_.options.console;
  if (api_.method != "GET") return send(Console::refuse_method(api_.method));
  if (!console.reads_files()) return send(console.serve(api_.path, parser_.request().headers));
  // Files read from a folder (--ui-dir): not on the loop.
  if (!ctx_.in_flight.try_add()) return send(shutting_down());
  bool queued = ctx_.pool.post([self = shared_from_this()]() mutable {
    ServerContext& ctx = self->ctx_;
    Reply r = ctx.options.console->serve(self->api_.path, self->parser_.request().headers);
    auto* c = self.get();
    asio::post(c->socket_.get_executor(),
               [self = std::move(self), r = std::move(r)]() mutable { self->send(std::move(r)); });
    ctx.in_flight.done();
  });
  if (!queued) {
    ctx_.in_flight.done();
    send(Reply::error(503, "overloaded", "too many requests are waiting; retry later"));
  }
}

// A body over the limit was never read, but its request line and headers
// were: under an Idempotency-Key its 413 is kept like any 4xx first reply,
// when the headers pass the checks a read request's would.
void Connection::refuse_oversized() {
  Reply too_large = unreadable_reply(parser_, ctx_.options.body_limit_bytes);
  ParsedRequest& in = parser_.request();
  api_ = ApiRequest{};
  api_.method = in.method;
  read_target(in.target, api_);
  // Its body was never read, but it has one: a type other than JSON is 415.
  if (auto refused = refuse_cross_site(in.headers, in.method, /*body_bytes=*/1, ctx_.site)) {
    return send(std::move(*refused));
  }
  if (read_api_headers(in.headers, ctx_.auth.enabled() ? &ctx_.auth : nullptr, api_)) {
    return send(std::move(too_large));
  }
  if (auto kept = keep_under_key(api_, too_large, /*body_over_limit=*/true)) {
    return submit(std::move(*kept));
  }
  send(std::move(too_large));
}

void Connection::answer(Answer a) {
  if (a.command) return submit(std::move(*a.command));
  send(std::move(*a.reply));
}

void Connection::submit(Request command, bool admitted) {
  if (admitted) {
    ctx_.in_flight.add_to_admitted();
  } else if (!ctx_.in_flight.try_add()) {
    // Also called on the blocking pool: the reply goes by the socket's executor.
    auto* c = this;
    asio::dispatch(c->socket_.get_executor(),
                   [self = shared_from_this()] { self->send(shutting_down()); });
    return;
  }
  ctx_.engine.submit(std::move(command), [self = shared_from_this()](Reply r) mutable {
    // Runs on the engine's writer thread: the reply goes to the loop with
    // the rest of its batch. The loop's one thread is the connection's
    // executor, so the inbox's task sends it there and then.
    ServerContext& ctx = self->ctx_;
    ctx.replies->deliver(
        [self = std::move(self), r = std::move(r)]() mutable { self->on_reply(std::move(r)); });
    ctx.in_flight.done();
  });
}

void Connection::on_reply(Reply r) {
  if (!long_poll_) return send(std::move(r));
  const bool no_work = r.status == 204;
  if (waiting_id_ != 0) {
    if (ctx_.claims->tried(waiting_id_, /*got_work=*/!no_work)) return;  // waits on
    waiting_id_ = 0;
  } else if (no_work && std::chrono::steady_clock::now() < wait_deadline_) {
    auto self = shared_from_this();
    waiting_id_ =
        ctx_.claims->park(long_poll_->group, wait_deadline_,
                          {[self] { self->claim_again(); }, [self] { self->end_wait(); }});
    if (waiting_id_ != 0) return;
    long_poll_.reset();
    return send(
        Reply::error(503, "overloaded", "too many claims are waiting for work; retry later"));
  }
  if (no_work) return end_wait();
  long_poll_.reset();
  send(std::move(r));
}

void Connection::claim_again() {
  // Nothing reads the socket while a claim waits: a client that closed it
  // (a runner told to stop) is seen here, before a job is given to it.
  if (!closed_ && client_gone()) close();
  if (closed_) {
    // Its client is gone: its place goes to the next claim of its group.
    ctx_.claims->tried(waiting_id_, /*got_work=*/true);
    return;
  }
  Answer a = run_handler(*route_, api_);
  if (a.command) return submit(std::move(*a.command));
  on_reply(std::move(*a.reply));
}

// The wait ended with no work: 204, kept under the request's key now (the
// 204s before were not, see Request::tried_again_on_no_content).
void Connection::end_wait() {
  long_poll_.reset();
  waiting_id_ = 0;
  if (auto kept = keep_under_key(api_, Reply{204, ""}, /*body_over_limit=*/false)) {
    return submit(std::move(*kept));
  }
  send(Reply{204, ""});
}

void Connection::send(Reply r) {
  if (closed_) return;
  ctx_.counters.reply(r.status);
  if (read_seq_ && !r.has_seq()) r.add_seq(*read_seq_);
  read_seq_.reset();
  body_ = std::move(r.body);
  ResponseHead h;
  h.status = r.status;
  h.content_type = r.content_type;
  h.body_bytes = body_.size();  // for HEAD too: the length a GET would send
  h.keep_alive = keep_alive_;
  h.http10 = http10_;
  // Worked out here rather than kept with the reply, so that a 405 replayed
  // under its Idempotency-Key says it too.
  std::string allow;
  if (r.status == 405) {
    allow = ctx_.options.console && console_path(api_.path)
                ? "GET, HEAD"
                : ctx_.router.allowed_methods(api_.path);
  }
  h.allow = allow;
  h.extra = r.headers;
  if (head_only_ || r.status == 204 || r.status == 304) body_.clear();
  head_.clear();
  append_response_head(head_, h);
  // Counted until written (or the socket closes): the budget of reads.
  reply_bytes_counted_ = head_.size() + body_.size();
  ctx_.counters.add_reply_bytes(reply_bytes_counted_);
  reply_written_ = 0;
  write_reply();
}

// The write timeout counts from the last bytes the client took, not from
// the start of the reply: a client on a slow link reading a page of
// megabytes is not cut off while it reads, and one that stops reading is
// let go after the timeout all the same.
void Connection::write_reply() {
  arm(ctx_.options.write_timeout_ms);
  const size_t from_head = std::min(reply_written_, head_.size());
  std::array<asio::const_buffer, 2> rest{asio::buffer(head_) + from_head,
                                         asio::buffer(body_) + (reply_written_ - from_head)};
  socket_.async_write_some(rest, [self = shared_from_this()](error_code ec, size_t n) {
    if (ec) return self->close();
    self->reply_written_ += n;
    if (self->reply_written_ < self->head_.size() + self->body_.size()) {
      return self->write_reply();
    }
    self->on_written();
  });
}

void Connection::on_written() {
  uncount_reply_bytes();
  // A large body's buffer is not kept by an idle keep-alive socket.
  if (body_.capacity() > kBodyBytesKeptMax) std::string().swap(body_);
  if (!keep_alive_) return close_gracefully();
  parser_.reset();
  continue_sent_ = false;
  arm(ctx_.options.keep_alive_timeout_s * 1000);
  if (begin_ < end_) return parse();  // a pipelined request is already here
  read_more();
}

void Connection::open_live_stream() {
  uint64_t after = 0;
  if (!ctx_.clients.take_stream(address_)) {
    ctx_.counters.refused(HttpCounters::Refusal::kClientStreams);
    Reply r = Reply::error(503, "too_many_streams",
                           "this client address holds its most live streams (" +
                               std::to_string(ctx_.clients.streams_max()) +
                               ", --live-streams-per-client-max); close one, or retry later");
    r.headers = "Retry-After: 1\r\n";
    return send(std::move(r));
  }
  holds_stream_slot_ = true;
  if (auto refused = ctx_.live->open(api_, &after)) {
    ctx_.clients.release_stream(address_);
    holds_stream_slot_ = false;
    return send(std::move(*refused));
  }
  // A stop waits for each stream to end (it sends the stream its end).
  if (!ctx_.in_flight.try_add()) {
    ctx_.live->abandon();
    return send(shutting_down());
  }
  streaming_ = true;
  keep_alive_ = false;
  static const std::string kHead =
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
      "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
  stream_queue_.push_back({nullptr, kHead, /*framed=*/false});
  stream_queued_bytes_ += kHead.size();
  write_stream();
  watch_stream();
  ctx_.live->add(shared_from_this(), after);
}

// A reader sends nothing more: a read that ends is the reader gone.
void Connection::watch_stream() {
  begin_ = end_ = 0;
  socket_.async_read_some(asio::buffer(input_.data(), input_.size()),
                          [self = shared_from_this()](error_code ec, size_t) {
                            if (ec || self->closed_) return self->close();
                            self->watch_stream();
                          });
}

void Connection::push(std::shared_ptr<const std::string> owner, std::string_view text) {
  if (closed_ || stream_finishing_ || text.empty()) return;
  stream_queue_.push_back({std::move(owner), text, /*framed=*/true});
  stream_queued_bytes_ += text.size();
  write_stream();
}

void Connection::finish(std::string_view end_message) {
  if (closed_ || stream_finishing_) return;
  // The view queued must be of the copy kept alive with it: the caller's
  // text is gone before a write already in flight lets this one start.
  auto owned = std::make_shared<const std::string>(end_message);
  push(owned, *owned);
  static const std::string kLastChunk = "0\r\n\r\n";
  stream_queue_.push_back({nullptr, kLastChunk, /*framed=*/false});
  stream_queued_bytes_ += kLastChunk.size();
  stream_finishing_ = true;
  write_stream();
}

void Connection::write_stream() {
  if (stream_writing_ || closed_) return;
  if (stream_queue_.empty()) {
    if (!stream_finishing_) return disarm();
    // All sent: the reader sees the end; the watching read sees it close.
    // (Over TLS too: the last chunk ends the reply, and the read pending
    // forbids TLS's own shutdown.)
    error_code ec;
    socket_.lowest_layer().shutdown(asio::ip::tcp::socket::shutdown_send, ec);
    if (ec) return close();
    return arm(kLingerMs);
  }
  // Several chunks in one write: each framed as a chunk of its own.
  constexpr size_t kPiecesPerWriteMax = 32;
  const size_t pieces = std::min(stream_queue_.size(), kPiecesPerWriteMax);
  stream_chunk_heads_.resize(pieces);
  stream_buffers_.clear();
  for (size_t i = 0; i < pieces; ++i) {
    const StreamPiece& piece = stream_queue_[i];
    if (piece.framed) {
      char size[24];
      const int n = std::snprintf(size, sizeof size, "%zx\r\n", piece.text.size());
      stream_chunk_heads_[i].assign(size, static_cast<size_t>(n));
      stream_buffers_.push_back(asio::buffer(stream_chunk_heads_[i]));
    }
    stream_buffers_.push_back(asio::buffer(piece.text.data(), piece.text.size()));
    if (piece.framed) stream_buffers_.push_back(asio::buffer("\r\n", 2));
  }
  stream_writing_ = true;
  arm(ctx_.options.write_timeout_ms);
  asio::async_write(socket_, stream_buffers_,
                    [self = shared_from_this(), pieces](error_code ec, size_t) {
                      self->stream_writing_ = false;
                      if (ec || self->closed_) return self->close();
                      for (size_t i = 0; i < pieces; ++i) {
                        self->stream_queued_bytes_ -= self->stream_queue_.front().text.size();
                        self->stream_queue_.pop_front();
                      }
                      self->write_stream();
                    });
}

void Connection::arm(int timeout_ms) {
  deadline_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  if (!timer_waiting_ || deadline_ < timer_.expiry()) wait_for_deadline();
}

void Connection::disarm() { deadline_ = std::chrono::steady_clock::time_point::max(); }

void Connection::wait_for_deadline() {
  timer_waiting_ = true;
  const uint64_t generation = ++timer_generation_;
  timer_.expires_at(deadline_);  // cancels a later wait, which then finds its generation old
  timer_.async_wait([self = shared_from_this(), generation](error_code ec) {
    if (generation != self->timer_generation_) return;
    self->timer_waiting_ = false;
    if (ec || self->closed_ || self->deadline_ == std::chrono::steady_clock::time_point::max()) {
      return;
    }
    if (std::chrono::steady_clock::now() >= self->deadline_) return self->close();
    self->wait_for_deadline();  // the deadline moved on since this wait began
  });
}

void Connection::uncount_reply_bytes() {
  if (reply_bytes_counted_ == 0) return;
  const bool burst_over =
      ctx_.counters.sub_reply_bytes(reply_bytes_counted_, HttpCounters::kReplyBytesBeforeRelease);
  reply_bytes_counted_ = 0;
  // The last reply of a burst of big ones is out: what they freed goes back.
  if (burst_over) ctx_.pool.post(return_free_memory_to_the_system);
}

void Connection::close() {
  if (closed_) return;
  closed_ = true;
  uncount_reply_bytes();
  stream_queue_.clear();
  stream_queued_bytes_ = 0;
  if (streaming_) {
    streaming_ = false;
    ctx_.in_flight.done();
  }
  disarm();
  ++timer_generation_;
  timer_.cancel();  // the wait holds the connection: let it go now
  error_code ec;
  socket_.lowest_layer().close(ec);
}

void Connection::close_gracefully() {
  if (closed_) return;
  if (socket_.tls()) {
    // close_notify, then the peer's (or the linger's end).
    arm(kLingerMs);
    socket_.async_tls_shutdown([self = shared_from_this()](error_code) { self->close(); });
    return;
  }
  error_code ec;
  socket_.lowest_layer().shutdown(asio::ip::tcp::socket::shutdown_send, ec);
  if (ec) return close();
  arm(kLingerMs);
  begin_ = end_ = 0;
  drain();
}

void Connection::drain() {
  socket_.async_read_some(asio::buffer(input_.data(), input_.size()),
                          [self = shared_from_this()](error_code ec, size_t) {
                            if (ec || self->closed_) return self->close();
                            self->drain();
                          });
}

}  // namespace runledger::http

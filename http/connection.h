// Connection: one client socket of the event-driven server. It reads a
// request, answers it, and waits for the next one on the same socket
// (keep-alive), one request at a time; bytes of a pipelined request wait in
// its buffer until the reply before them was written.
//
// Where a request runs:
//  - parsing, headers, routing, and the handlers of commands (which only
//    check the body and build the command) run on the event loop; the
//    command then goes to the engine, and the loop serves other sockets
//    until the engine hands the durable reply back;
//  - handlers that may wait (reads, scans) run on the blocking pool;
//  - a live event stream is written by the loop, with what LiveStreams
//    pushes (http/live_stream.h), while a read watches for the reader to go.
//
// Deadlines: a request must arrive whole within the read timeout from its
// first byte (a client sending a byte now and then cannot hold the socket
// longer), an idle keep-alive socket is closed after the keep-alive timeout,
// and each reply must be taken within the write timeout. A deadline is
// kept lazily: moving it is a store, and the timer, when it fires, closes
// the socket if the deadline has passed or sleeps again until it. A request
// moves the deadline three times (read, write, keep-alive), and re-arming an
// asio timer each time cost a cancelled wait through the loop's scheduler
// and often a timerfd_settime.
//
// Every member is used on the connection's executor only (the loop's one
// thread), except api_ and the parsed request, which the blocking pool uses
// while a handler runs there: the loop then leaves them alone (no read is
// pending) until the pool hands back.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "http/live_stream.h"
#include "http/request_parser.h"
#include "http/server_context.h"
#include "http/transport.h"

namespace runledger::http {

class Connection : public std::enable_shared_from_this<Connection>, public LiveStreams::Sink {
 public:
  // `refuse`: the server is at its connection limit; the request is read and
  // answered 503, and the socket closed.
  // `tls`: the server's TLS context, nullptr for plain HTTP.
  // `address`: the client's, whose connection slot (ClientLimits) the
  // connection holds and gives back when it ends.
  Connection(ServerContext& ctx, boost::asio::ip::tcp::socket socket,
             std::shared_ptr<boost::asio::ssl::context> tls, bool refuse, std::string address);
  ~Connection() override;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  void start();

 private:
  void read_more();
  void parse();
  void dispatch();
  void refuse_oversized();
  void serve_console();
  // On the pool, with nothing of the loop pending on the socket: whether
  // the client closed or reset it.
  bool client_gone();
  void uncount_reply_bytes();
  void answer(Answer answer);
  // `admitted`: the request already counts as in flight (it came through
  // the blocking pool), so a stop that began meanwhile still lets it run.
  void submit(Request command, bool admitted = false);
  // A command's durable reply, on the loop: sent, or for a claim that
  // waits for work and found none, parked (see http/claim_waiters.h).
  void on_reply(Reply reply);
  void claim_again();
  void end_wait();
  void send(Reply reply);
  // Hands the rest of the reply to the socket as the client takes it.
  void write_reply();
  void on_written();
  void send_continue();
  // GET /v1/events/live: the stream's head, then what LiveStreams pushes.
  void open_live_stream();
  void watch_stream();
  void write_stream();
  void push(std::shared_ptr<const std::string> owner, std::string_view text) override;
  size_t queued_bytes() const override { return stream_queued_bytes_; }
  void finish(std::string_view end_message) override;
  bool gone() const override { return closed_; }

  // Sets the deadline `timeout_ms` from now; disarm() lifts it.
  void arm(int timeout_ms);
  void disarm();
  void wait_for_deadline();
  void close();
  // Stops sending, then reads and drops what the client still sends for a
  // moment before closing: a plain close with unread bytes resets the
  // socket, and the client may lose the reply it has not read yet.
  void close_gracefully();
  void drain();

  ServerContext& ctx_;
  Transport socket_;
  boost::asio::steady_timer timer_;
  std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::time_point::max();
  bool timer_waiting_ = false;     // a wait on timer_ is pending, until timer_.expiry()
  uint64_t timer_generation_ = 0;  // a wait replaced by a sooner one is ignored
  const bool refuse_;
  bool closed_ = false;

  std::vector<char> input_;  // received bytes [begin_, end_) not parsed yet
  size_t begin_ = 0;
  size_t end_ = 0;
  RequestParser parser_;
  bool continue_sent_ = false;

  ApiRequest api_;
  // A claim that waits for work: its route (to build it again), how long it
  // waits, and its place among the waiting claims once parked (0: not yet).
  const Router::Route* route_ = nullptr;
  std::optional<LongPoll> long_poll_;
  std::chrono::steady_clock::time_point wait_deadline_{};
  uint64_t waiting_id_ = 0;
  size_t served_ = 0;
  bool keep_alive_ = true;
  bool http10_ = false;
  bool head_only_ = false;  // HEAD: the reply's headers without its body
  // A read of the API: its reply says how far the log behind it goes, the
  // store's last seq before it ran when the engine did not say so itself.
  std::optional<uint64_t> read_seq_;
  size_t reply_bytes_counted_ = 0;  // of the reply being written, in the server's count
  std::string head_;                // of the reply being written
  std::string body_;                // of the reply being written
  size_t reply_written_ = 0;        // bytes of head_ and then body_ taken by the socket

  // A live stream: the chunks queued (each kept alive by its owner), and
  // those being written.
  struct StreamPiece {
    std::shared_ptr<const std::string> owner;
    std::string_view text;
    bool framed;  // sent as a chunk of its own (the head and the last chunk are not)
  };
  bool streaming_ = false;          // holds a count of the server's work in flight until closed
  const std::string address_;       // the client's (ClientLimits)
  bool holds_stream_slot_ = false;  // of its address's live streams
  bool stream_writing_ = false;
  bool stream_finishing_ = false;
  std::deque<StreamPiece> stream_queue_;
  size_t stream_queued_bytes_ = 0;
  std::vector<std::string> stream_chunk_heads_;
  std::vector<boost::asio::const_buffer> stream_buffers_;
};

}  // namespace runledger::http

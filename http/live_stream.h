// LiveStreams: GET /v1/events/live, the log as Server-Sent Events, served on
// the event loop (docs/api.md "Live events"; docs/operations.md, Limits).
//
// Each event is sent as `id: <seq>` + `data: <event JSON>`; a reader resumes
// after `Last-Event-ID` (which wins over `?after=`). No stream holds a
// thread: the loop checks the log's last seq every kPollMs and, when it
// moved, one read on the blocking pool renders the new events once for every
// reader at the head. A reader that starts behind (resuming from an old id)
// catches up by reads of its own, one at a time and only while its buffer is
// below half its bound, so that memory grows with readers, not with history.
//
// Each reader's unsent bytes are bounded (kBufferBytesMax): a reader too slow
// to keep up, or whose socket takes no bytes for the write timeout, is ended
// with an `event: end` message and resumes from its last id. Reads come from
// the store, never the engine's memory, so a slow reader cannot slow the
// engine. At most `max_streams` are open at once (503 beyond).
//
// Everything but open_now(), events_sent() and metrics_text() runs on the
// loop's thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "engine/engine.h"
#include "http/api_request.h"

namespace runledger::http {

class BlockingPool;
class InFlight;

class LiveStreams {
 public:
  // Bytes a reader may have queued and not yet taken; beyond, it is ended.
  static constexpr size_t kBufferBytesMax = 1 << 20;
  // A reader that far behind the log's end is ended (it resumes by id).
  static constexpr uint64_t kLagEventsMax = 1'000'000;
  static constexpr int kPollMs = 50;
  static constexpr int kKeepAliveMs = 15000;
  // One read renders at most this many events, or about half a buffer.
  static constexpr size_t kEventsPerReadMax = 1000;

  // A reader's connection as the streams see it.
  class Sink {
   public:
    virtual ~Sink() = default;
    // Queues `text` as one chunk of the stream; `owner` keeps it alive.
    virtual void push(std::shared_ptr<const std::string> owner, std::string_view text) = 0;
    // Bytes queued and not yet written.
    virtual size_t queued_bytes() const = 0;
    // Queues the `event: end` message and the stream's end, then closes.
    virtual void finish(std::string_view end_message) = 0;
    // The connection is closed (the reader left, or finish() ended it).
    virtual bool gone() const = 0;
  };

  LiveStreams(boost::asio::io_context& io, Engine& engine, BlockingPool& pool, InFlight& in_flight,
              size_t max_streams);
  ~LiveStreams();
  LiveStreams(const LiveStreams&) = delete;
  LiveStreams& operator=(const LiveStreams&) = delete;

  // Checks the request and takes a stream slot. On success returns nothing
  // and sets *after to the seq to stream after; otherwise the refusal (422 for
  // a bad cursor, 503 when every slot is taken).
  std::optional<Reply> open(const ApiRequest& request, uint64_t* after);
  // Frees the slot of an open() whose stream never started.
  void abandon() { active_.fetch_sub(1); }
  // Starts streaming the events after `after` to `sink` (its head written).
  void add(std::shared_ptr<Sink> sink, uint64_t after);
  // Ends every stream with a "server shutting down" message. Any thread.
  void stop();

  // For /metrics: the streams open now, and the events sent to them.
  size_t open_now() const { return active_.load(std::memory_order_relaxed); }
  uint64_t events_sent() const { return events_sent_.load(std::memory_order_relaxed); }
  // Their lines in the Prometheus text format.
  std::string metrics_text() const;

  // Events rendered once, shared by every reader they are sent to.
  struct Batch {
    std::string text;
    std::vector<std::pair<uint64_t, size_t>> starts;  // each event's seq and offset in text
    uint64_t first_after = 0;                         // the read was of events after it
    uint64_t last = 0;                                // seq of the last event read
  };

 private:
  struct Reader {
    std::shared_ptr<Sink> sink;
    uint64_t cursor = 0;   // the last seq queued to it
    bool reading = false;  // a catch-up read of its own is in flight
    bool ended = false;    // finish() was called: nothing more is queued
    std::chrono::steady_clock::time_point last_sent;
  };

  void tick();
  void schedule_tick();
  // Reads (after, up to] on the pool, at most kEventsPerReadMax events, and
  // calls `done` on the loop with the batch (nullptr when the read failed).
  void read(uint64_t after, uint64_t up_to,
            std::function<void(std::shared_ptr<const Batch>, std::string error)> done);
  void catch_up(const std::shared_ptr<Reader>& reader);
  void deliver(Reader& r, const std::shared_ptr<const Batch>& batch);
  void end(Reader& r, const std::string& reason);
  void on_head(std::shared_ptr<const Batch> batch, const std::string& error);

  boost::asio::io_context& io_;
  Engine& engine_;
  BlockingPool& pool_;
  InFlight& in_flight_;
  const size_t max_streams_;
  boost::asio::steady_timer timer_;
  bool ticking_ = false;
  bool stopping_ = false;
  std::vector<std::shared_ptr<Reader>> readers_;
  uint64_t head_ = 0;          // readers at or past it are sent the reads of the head
  bool head_reading_ = false;  // a read of the head is in flight
  bool head_known_ = false;
  std::atomic<size_t> active_{0};
  std::atomic<uint64_t> events_sent_{0};
};

}  // namespace runledger::http

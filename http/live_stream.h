// LiveStreams: GET /v1/events/live, the log as Server-Sent Events.
// Each event is sent as `id: <seq>` + `data: <event JSON>`; a reader resumes
// after `Last-Event-ID` (which wins over `?after=`). Readers read the store,
// never the engine's memory, so a slow reader cannot slow the engine; one
// that falls more than kLagEventsMax behind, or whose socket stops taking
// bytes for the write timeout, is ended with an `event: end` message.
// At most `max_streams` run at once (each holds a thread of the server's
// blocking pool while it streams).
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <optional>
#include <string_view>

#include "engine/engine.h"
#include "http/api_request.h"

namespace runledger::http {

class LiveStreams {
 public:
  static constexpr uint64_t kLagEventsMax = 1'000'000;
  static constexpr int kPollMs = 50;
  static constexpr int kKeepAliveMs = 15000;
  static constexpr size_t kEventsPerWakeMax = 1000;

  LiveStreams(Engine& engine, size_t max_streams) : engine_(engine), max_streams_(max_streams) {}
  // Sends bytes to the reader; false once the reader is gone (or its socket
  // stopped taking bytes for the write timeout).
  using Writer = std::function<bool(std::string_view text)>;

  // Checks the request and takes a stream slot. On success returns nothing
  // and sets *after to the seq to stream after; otherwise the refusal (422 for
  // a bad cursor, 503 when every slot is taken).
  std::optional<Reply> open(const ApiRequest& request, uint64_t* after);
  // Streams the events after `after` until the reader is gone, falls too far
  // behind or the server stops, then frees the slot open() took. Blocks.
  void run(uint64_t after, const Writer& write);
  // Frees the slot of an open() whose run() never came (the reply could
  // not be started).
  void abandon() { active_.fetch_sub(1); }
  void stop() { stopping_ = true; }
  // For /metrics: the streams open now, and the events sent to them.
  size_t open_now() const { return active_.load(std::memory_order_relaxed); }
  uint64_t events_sent() const { return events_sent_.load(std::memory_order_relaxed); }
  // Their lines in the Prometheus text format.
  std::string metrics_text() const;

 private:
  Engine& engine_;
  size_t max_streams_;
  std::atomic<size_t> active_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> events_sent_{0};
};

}  // namespace runledger::http

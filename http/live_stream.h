// LiveStreams: GET /v1/events/live, the log as Server-Sent Events.
// Each event is sent as `id: <seq>` + `data: <event JSON>`; a reader resumes
// after `Last-Event-ID` (which wins over `?after=`). Readers read the store,
// never the engine's memory, so a slow reader cannot slow the engine; one
// that falls more than kLagEventsMax behind, or whose socket stops taking
// bytes for the write timeout, is ended with an `event: end` message.
// At most `max_streams` run at once (each holds an HTTP thread).
#pragma once

#include <atomic>
#include <cstddef>

#include "engine/engine.h"
#include "http/api_request.h"

namespace httplib {
struct Response;
}

namespace runledger::http {

class LiveStreams {
 public:
  static constexpr uint64_t kLagEventsMax = 1'000'000;
  static constexpr int kPollMs = 50;
  static constexpr int kKeepAliveMs = 15000;
  static constexpr size_t kEventsPerWakeMax = 1000;

  LiveStreams(Engine& engine, size_t max_streams) : engine_(engine), max_streams_(max_streams) {}
  void serve(const ApiRequest& request, httplib::Response& res);
  void stop() { stopping_ = true; }

 private:
  Engine& engine_;
  size_t max_streams_;
  std::atomic<size_t> active_{0};
  std::atomic<bool> stopping_{false};
};

}  // namespace runledger::http

#include "http/live_stream.h"

#include <charconv>
#include <chrono>
#include <string>
#include <thread>

#include "http/handler_support.h"

namespace runledger::http {
namespace {

bool parse_seq(const std::string& s, uint64_t* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

// The last message of a stream, which a reader can tell from a dropped socket.
std::string end_message(const std::string& reason) {
  return "event: end\ndata: " + nlohmann::json{{"reason", reason}}.dump() + "\n\n";
}

}  // namespace

std::optional<Reply> LiveStreams::open(const ApiRequest& a, uint64_t* after) {
  *after = 0;
  if (!a.last_event_id.empty()) {
    if (!parse_seq(a.last_event_id, after)) {
      return Reply::error(422, "invalid_field", "header Last-Event-ID must be a sequence number",
                          {{"field", "Last-Event-ID"}});
    }
  } else if (const auto* v = a.query_value("after")) {
    if (!parse_seq(*v, after)) {
      return Reply::error(422, "invalid_query", "query parameter 'after' must be a sequence number",
                          {{"field", "after"}});
    }
  }
  if (active_.fetch_add(1) >= max_streams_) {
    active_.fetch_sub(1);
    return Reply::error(503, "too_many_streams", "too many live streams are open; retry later");
  }
  return std::nullopt;
}

std::string LiveStreams::metrics_text() const {
  return "# HELP runledger_live_streams Live event streams (GET /v1/events/live) open now.\n"
         "# TYPE runledger_live_streams gauge\n"
         "runledger_live_streams " +
         std::to_string(open_now()) +
         "\n# HELP runledger_live_stream_events_total Events sent to live streams.\n"
         "# TYPE runledger_live_stream_events_total counter\n"
         "runledger_live_stream_events_total " +
         std::to_string(events_sent()) + "\n";
}

void LiveStreams::run(uint64_t after, const Writer& write) {
  uint64_t cursor = after;
  int idle_ms = 0;
  std::string chunk;
  for (;;) {
    if (stopping_) {
      write(end_message("server shutting down"));
      break;
    }
    EventStore& store = engine_.store();
    if (store.last_seq() > cursor + kLagEventsMax) {
      write(end_message("reader fell too far behind"));
      break;
    }
    chunk.clear();
    size_t n = 0;
    Status st = store.read_range(cursor, 0, [&](const fb::Event& e, std::string_view) {
      chunk += "id: " + std::to_string(e.seq()) + "\ndata: " + event_json(e).dump() + "\n\n";
      cursor = e.seq();
      return ++n < kEventsPerWakeMax;
    });
    if (!st.ok()) {
      write(end_message("reading the log failed: " + st.ToString()));
      break;
    }
    if (n == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
      idle_ms += kPollMs;
      if (idle_ms < kKeepAliveMs) continue;
      chunk = ": keep-alive\n\n";
    }
    idle_ms = 0;
    events_sent_.fetch_add(n, std::memory_order_relaxed);
    if (!write(chunk)) break;
  }
  active_.fetch_sub(1);
}

}  // namespace runledger::http

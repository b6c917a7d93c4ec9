#include "http/live_stream.h"

#include <charconv>
#include <chrono>
#include <memory>
#include <thread>

#include <httplib.h>

#include "http/handler_support.h"

namespace runledger::http {
namespace {

bool parse_seq(const std::string& s, uint64_t* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

// Ends the stream with a message the reader can tell from a dropped socket.
void end_stream(httplib::DataSink& sink, const std::string& reason) {
  std::string msg = "event: end\ndata: " + nlohmann::json{{"reason", reason}}.dump() + "\n\n";
  sink.write(msg.data(), msg.size());
  sink.done();
}

void send_reply(httplib::Response& res, const Reply& r) {
  res.status = r.status;
  res.set_content(r.body, "application/json");
}

}  // namespace

void LiveStreams::serve(const ApiRequest& a, httplib::Response& res) {
  uint64_t after = 0;
  if (!a.last_event_id.empty()) {
    if (!parse_seq(a.last_event_id, &after)) {
      return send_reply(res, Reply::error(422, "invalid_field",
                                          "header Last-Event-ID must be a sequence number",
                                          {{"field", "Last-Event-ID"}}));
    }
  } else if (const auto* v = a.query_value("after")) {
    if (!parse_seq(*v, &after)) {
      return send_reply(res, Reply::error(422, "invalid_query",
                                          "query parameter 'after' must be a sequence number",
                                          {{"field", "after"}}));
    }
  }
  if (active_.fetch_add(1) >= max_streams_) {
    active_.fetch_sub(1);
    return send_reply(res, Reply::error(503, "too_many_streams",
                                        "too many live streams are open; retry later"));
  }
  auto cursor = std::make_shared<uint64_t>(after);
  auto idle_ms = std::make_shared<int>(0);
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream",
      [this, cursor, idle_ms](size_t, httplib::DataSink& sink) {
        if (stopping_) {
          end_stream(sink, "server shutting down");
          return true;
        }
        EventStore& store = engine_.store();
        if (store.last_seq() > *cursor + kLagEventsMax) {
          end_stream(sink, "reader fell too far behind");
          return true;
        }
        std::string chunk;
        size_t n = 0;
        Status st = store.read_range(*cursor, 0, [&](const fb::Event& e, std::string_view) {
          chunk += "id: " + std::to_string(e.seq()) + "\ndata: " + event_json(e).dump() + "\n\n";
          *cursor = e.seq();
          return ++n < kEventsPerWakeMax;
        });
        if (!st.ok()) {
          end_stream(sink, "reading the log failed: " + st.ToString());
          return true;
        }
        if (n == 0) {
          std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
          *idle_ms += kPollMs;
          if (*idle_ms < kKeepAliveMs) return true;
          chunk = ": keep-alive\n\n";
        }
        *idle_ms = 0;
        // A reader whose socket does not take the bytes within the write
        // timeout is dropped by the library: returning false ends it.
        return sink.write(chunk.data(), chunk.size());
      },
      [this](bool) { active_.fetch_sub(1); });
}

}  // namespace runledger::http

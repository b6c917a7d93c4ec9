// The global event feed (GET /v1/events). The live stream (SSE) is served
// by the server itself (see server.cc) because it streams.
#include "http/handler_support.h"
#include "http/routes.h"

namespace runledger::http {
namespace {

constexpr int64_t kEventsLimitMax = 10000;
constexpr int64_t kEventsLimitDefault = 100;

}  // namespace

void add_event_routes(Router& router, Engine& engine) {
  router.add("GET", "/v1/events", [&engine](ApiRequest& a) {
    auto after = static_cast<uint64_t>(query_int(a, "after", 0, 0, INT64_MAX));
    auto limit =
        static_cast<uint64_t>(query_int(a, "limit", kEventsLimitDefault, 1, kEventsLimitMax));
    nlohmann::json events = nlohmann::json::array();
    uint64_t last = after;
    Status st = engine.store().read_range(after, 0, [&](const fb::Event& e, std::string_view) {
      events.push_back(event_json(e));
      last = e.seq();
      return events.size() < limit;
    });
    if (!st.ok()) {
      return Reply::error(503, "unavailable", "reading the log failed: " + st.ToString());
    }
    return Reply::json(200, {{"events", std::move(events)}, {"next_after", last}});
  });
  // The connection streams GET /v1/events/live itself (http/live_stream.h).
  router.add_stream("GET", "/v1/events/live", [](ApiRequest&) {
    return Reply::error(400, "bad_request",
                        "GET /v1/events/live is a Server-Sent Events stream, served only over "
                        "an HTTP connection");
  });
}

}  // namespace runledger::http

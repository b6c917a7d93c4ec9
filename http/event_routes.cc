// The global event feed (GET /v1/events), with its filters. The live stream
// (SSE) is served by the connection itself (http/live_stream.h).
#include <algorithm>
#include <set>

#include "base/time_text.h"
#include "events/event_json.h"
#include "events/keys.h"
#include "http/handler_support.h"
#include "http/page_build_slots.h"
#include "http/routes.h"
#include "projections/stream_name.h"

namespace runledger::http {
namespace {

constexpr int64_t kEventsLimitMax = 10000;
constexpr int64_t kEventsLimitDefault = 100;
// Events a filtered page reads from the log at most. A stream filter reads
// only that stream; a kind or type filter reads the log in order, and a
// page that found fewer than its limit within this many events ends there
// (next_after says where), so a rare type costs bounded work per page.
constexpr uint64_t kFilterScanEventsMax = 100'000;

struct Filter {
  std::string stream;           // an exact stream, or empty
  std::string kind;             // a kind prefix ("job/"), or empty
  std::set<std::string> types;  // empty: any
  bool any() const { return !stream.empty() || !kind.empty() || !types.empty(); }
};

ApiError bad_query(const std::string& name, const std::string& message) {
  return ApiError{422, "invalid_query", message, {{"field", name}}};
}

Filter read_filter(const ApiRequest& a) {
  Filter f;
  if (const std::string* stream = a.query_value("stream")) {
    const std::optional<StreamKind> kind = stream_kind(*stream);
    if (kind && *stream == stream_prefix(*kind)) {
      f.kind = *stream;
    } else if (kind && keys::valid_stream_name(*stream) && valid_id(stream_id(*stream, *kind))) {
      f.stream = *stream;
    } else {
      throw bad_query("stream",
                      "query parameter 'stream' must be a stream (job/<id>, connector/<id>, "
                      "hold/<id>) or a kind (job/, connector/, hold/)");
    }
  }
  const auto types = a.query.equal_range("type");
  for (auto it = types.first; it != types.second; ++it) {
    if (!is_event_type_name(it->second))
      throw bad_query("type", "query parameter 'type' names no event type: " + it->second);
    f.types.insert(it->second);
  }
  return f;
}

bool passes(const Filter& f, const fb::Event& e) {
  if (!f.kind.empty() && e.stream()->string_view().rfind(f.kind, 0) != 0) return false;
  return f.types.empty() || f.types.count(std::string(event_type_name(e.payload_type()))) > 0;
}

// The seq before the first event recorded at or after `since_ms`, found by
// bisecting the log (its events are recorded in seq order).
Status seq_before(const EventStore& store, int64_t since_ms, uint64_t* before) {
  uint64_t low = 0;                      // recorded before since_ms (0: nothing)
  uint64_t high = store.last_seq() + 1;  // recorded at or after it (past the end)
  while (high - low > 1) {
    const uint64_t mid = low + (high - low) / 2;
    std::string bytes;
    if (Status s = store.read_event(mid, &bytes); !s.ok()) return s;
    const fb::Event* e = nullptr;
    if (Status s = decode_event(bytes, &e); !s.ok()) return s;
    if (e->recorded_at_ms() < since_ms) {
      low = mid;
    } else {
      high = mid;
    }
  }
  *before = low;
  return Status::Ok();
}

}  // namespace

void add_event_routes(Router& router, Engine& engine) {
  router.add("GET", "/v1/events", [&engine](ApiRequest& a) {
    auto after = static_cast<uint64_t>(query_int(a, "after", 0, 0, INT64_MAX));
    const auto limit =
        static_cast<size_t>(query_int(a, "limit", kEventsLimitDefault, 1, kEventsLimitMax));
    const Filter filter = read_filter(a);
    if (const std::string* since = a.query_value("since")) {
      int64_t since_ms = 0;
      if (!parse_time_ms(*since, &since_ms)) {
        throw bad_query("since", "query parameter 'since' must be an RFC 3339 time");
      }
      uint64_t before = 0;
      if (Status s = seq_before(engine.store(), since_ms, &before); !s.ok()) {
        return Reply::error(503, "unavailable", "reading the log failed: " + s.ToString());
      }
      after = std::max(after, before);
    }
    // The page is written as text, one event at a time: as a document, a
    // page of 10,000 events took tens of MB a request while it was built,
    // and many big reads at once took gigabytes.
    const PageBuildSlot slot;
    std::string body = R"({"events":[)";
    size_t count = 0;
    auto add = [&](const fb::Event& e) {
      if (count++ > 0) body += ',';
      body += event_json(e).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    };
    uint64_t last = after;
    Status st;
    if (!filter.stream.empty()) {
      st = engine.store().read_stream_from(filter.stream, 0, after,
                                           [&](const fb::Event& e, std::string_view) {
                                             if (!passes(filter, e)) return true;
                                             add(e);
                                             last = e.seq();
                                             return count < limit;
                                           });
    } else {
      uint64_t scanned = 0;
      st = engine.store().read_range(after, 0, [&](const fb::Event& e, std::string_view) {
        ++scanned;
        // With filters, a page that found nothing says how far it looked.
        if (count == 0 || !filter.any()) last = e.seq();
        if (passes(filter, e)) {
          add(e);
          last = e.seq();
          if (count >= limit) return false;
        }
        return !filter.any() || scanned < kFilterScanEventsMax;
      });
    }
    if (!st.ok()) {
      return Reply::error(503, "unavailable", "reading the log failed: " + st.ToString());
    }
    body += R"(],"next_after":)" + std::to_string(last) + "}";
    return Reply{200, std::move(body)};
  });
  // The connection streams GET /v1/events/live itself (http/live_stream.h).
  router.add_stream("GET", "/v1/events/live", [](ApiRequest&) {
    return Reply::error(400, "bad_request",
                        "GET /v1/events/live is a Server-Sent Events stream, served only over "
                        "an HTTP connection");
  });
}

}  // namespace runledger::http

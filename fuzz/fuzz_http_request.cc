// libFuzzer target: bytes -> requests (fuzz/request_text.h) -> the route
// handlers of a real engine (fuzz/api_under_test.h). Beyond "never crash",
// every answer is checked against the contract of docs/api.md:
//   - a status in 200..499 or 503 (a 500 is a handler that threw: a bug);
//   - a JSON body (not for 204 or /metrics); an error is {"error","code",...};
//   - a refusal (not 2xx) appended nothing; the exceptions of docs/api.md:
//     a stale sync report (409) is recorded as ignored, and a start or step
//     start refused with 409 "cancelled" records the cancellation;
//   - the events a request appended carry the caller as their actor (the
//     token's name when authenticated);
//   - a reader token only ever reaches GET routes, a worker token only the
//     worker calls (auth.cc and the router read the same decoded segments).
// The engine lives across inputs (opening one costs far more than a run) and
// is replaced every kCallsPerEngine calls: its log stays short, so reads of
// the whole log (GET /v1/events?limit=10000) stay fast.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "events/event_codec.h"
#include "fuzz/api_under_test.h"
#include "fuzz/request_text.h"
#include "http/path_segments.h"
#include "http/router.h"

namespace runledger::fuzz {
namespace {

constexpr uint64_t kCallsPerEngine = 2'000;

struct Harness {
  std::unique_ptr<ApiUnderTest> api;
  uint64_t calls = 0;
  uint64_t inputs = 0;
};

// Never destroyed by the C++ runtime: at exit RocksDB's own statics may be
// gone before ours, so the engine is closed by an atexit handler registered
// after RocksDB was first used (handlers run in reverse order).
Harness& harness() {
  static Harness* h = new Harness;
  return *h;
}

void close_at_exit() { harness().api.reset(); }

ApiUnderTest& api_for_next_input() {
  Harness& h = harness();
  if (h.api && h.calls < kCallsPerEngine) return *h.api;
  const bool first = !h.api;
  h.api.reset();
  h.api = std::make_unique<ApiUnderTest>();
  h.calls = 0;
  if (first) std::atexit(close_at_exit);
  return *h.api;
}

[[noreturn]] void fail(const char* why, const RequestText& r, const Reply& reply) {
  std::fprintf(stderr, "\n*** %s\n--- request:\n%s\n--- reply %d (%s):\n%s\n", why,
               join_request(r).c_str(), reply.status, reply.content_type.c_str(),
               reply.body.substr(0, 4096).c_str());
  std::abort();
}

// A reply's JSON body, parsed once for every check of it; discarded when
// the body is empty, not JSON, or not meant to be (/metrics).
nlohmann::json reply_json(const Reply& reply) {
  if (reply.content_type != "application/json" || reply.body.empty()) {
    return nlohmann::json(nlohmann::json::value_t::discarded);
  }
  return nlohmann::json::parse(reply.body, nullptr, /*allow_exceptions=*/false);
}

void check_well_formed(const RequestText& r, const Reply& reply, const nlohmann::json& j) {
  const bool server_error = reply.status >= 500 && reply.status != 503;
  if (reply.status < 200 || reply.status > 599 || server_error) {
    fail("status outside the contract", r, reply);
  }
  if (reply.content_type != "application/json") return;  // /metrics
  if (reply.body.empty()) {
    if (reply.status != 204) fail("empty JSON body", r, reply);
    return;
  }
  if (j.is_discarded()) fail("body is not JSON", r, reply);
  if (reply.status >= 400 && (!j.is_object() || !j.contains("error") || !j["error"].is_string() ||
                              !j.contains("code") || !j["code"].is_string())) {
    fail("error body without \"error\" and \"code\"", r, reply);
  }
}

std::vector<std::string> path_segments(const RequestText& r) {
  return http::split_path(r.target.substr(0, r.target.find('?')));
}

// segments match `pattern`, where "*" is any segment and "a|b" either one.
bool matches(const std::vector<std::string>& segments, const std::vector<std::string>& pattern) {
  if (segments.size() != pattern.size()) return false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == "*") continue;
    bool any = false;
    size_t from = 0;
    while (from <= pattern[i].size() && !any) {
      size_t bar = pattern[i].find('|', from);
      if (bar == std::string::npos) bar = pattern[i].size();
      any = pattern[i].compare(from, bar - from, segments[i]) == 0;
      from = bar + 1;
    }
    if (!any) return false;
  }
  return true;
}

bool sync_report(const RequestText& r) {
  return r.method == "POST" && matches(path_segments(r), {"v1", "connectors", "*", "syncs", "*",
                                                          "progress|succeeded|failed"});
}

bool worker_route(const RequestText& r) {
  const auto s = path_segments(r);
  return r.method == "POST" &&
         (matches(s, {"v1", "jobs", "claim"}) ||
          matches(s, {"v1", "jobs", "*",
                      "heartbeat|release|start|cancel-ack|outcome-unknown|reattach"}) ||
          matches(s, {"v1", "jobs", "*", "steps", "*", "start|done|failed"}) || sync_report(r));
}

bool cancelling_start(const RequestText& r, const Reply& reply, const nlohmann::json& j) {
  if (r.method != "POST" || reply.status != 409) return false;
  if (!j.is_object() || j.value("code", "") != "cancelled") return false;
  const auto s = path_segments(r);
  return matches(s, {"v1", "jobs", "*", "start"}) ||
         matches(s, {"v1", "jobs", "*", "steps", "*", "start"});
}

// The refusals docs/api.md lets record an event.
bool recorded_refusal(const RequestText& r, const Reply& reply, const nlohmann::json& j) {
  return (reply.status == 409 && sync_report(r)) || cancelling_start(r, reply, j);
}

void check_role(const RequestText& r, const Outcome& o) {
  if (!o.routed || !o.role || r.method == "GET") return;
  if (*o.role == http::Role::kReader) fail("a reader token changed something", r, o.reply);
  if (*o.role == http::Role::kWorker && !worker_route(r)) {
    fail("a worker token reached a route that is not a worker call", r, o.reply);
  }
}

std::string expected_actor(const RequestText& r, const Outcome& o) {
  if (o.role) {
    const std::string* token = r.header("Authorization");
    if (token->find(kReaderToken) != std::string::npos) return "ann";
    if (token->find(kWorkerToken) != std::string::npos) return "wes";
    return "ops";
  }
  const std::string* actor = r.header("X-Runledger-Actor");
  return actor != nullptr ? *actor : "anonymous";
}

void check_appended(ApiUnderTest& api, const RequestText& r, const Outcome& o,
                    const nlohmann::json& j, uint64_t before) {
  const uint64_t after = api.last_seq();
  if (after == before) return;
  const bool refused = o.reply.status < 200 || o.reply.status > 299;
  if (refused && !recorded_refusal(r, o.reply, j)) {
    fail("a refused request appended events", r, o.reply);
  }
  const std::string actor = expected_actor(r, o);
  Status st =
      api.engine().store().read_range(before, after, [&](const fb::Event& e, std::string_view) {
        if (e.actor() == nullptr || e.actor()->str() != actor) {
          fail(("an event was recorded with actor '" + (e.actor() ? e.actor()->str() : "") +
                "', not '" + actor + "'")
                   .c_str(),
               r, o.reply);
        }
        return true;
      });
  if (!st.ok()) fail(("reading the new events failed: " + st.ToString()).c_str(), r, o.reply);
}

// Remembers what a reply handed out, for the placeholders of later requests.
void capture(const nlohmann::json& j, Captures& c) {
  if (!j.is_object()) return;
  auto take = [](const nlohmann::json& o, const char* key, std::string& into) {
    auto it = o.find(key);
    if (it != o.end() && it->is_string()) into = it->get<std::string>();
  };
  take(j, "lease_token", c.lease_token);
  take(j, "sync_id", c.sync_id);
  take(j, "id", c.id);
  if (auto job = j.find("job"); job != j.end() && job->is_object()) take(*job, "id", c.id);
}

}  // namespace
}  // namespace runledger::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace runledger::fuzz;
  auto requests = split_requests({reinterpret_cast<const char*>(data), size});
  if (requests.empty()) return 0;
  ApiUnderTest& api = api_for_next_input();
  Harness& h = harness();
  Captures captures;
  captures.n = std::to_string(++h.inputs);
  for (auto& r : requests) {
    substitute(r, captures);
    const uint64_t before = api.last_seq();
    auto outcome = api.call(r);
    ++h.calls;
    if (!outcome) continue;
    const nlohmann::json body = reply_json(outcome->reply);
    check_well_formed(r, outcome->reply, body);
    check_role(r, *outcome);
    check_appended(api, r, *outcome, body, before);
    capture(body, captures);
  }
  return 0;
}

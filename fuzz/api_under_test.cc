// ApiUnderTest: see api_under_test.h. The request path below follows
// http/connection.cc step by step; keep the two in step.
#include "fuzz/api_under_test.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "http/handler_support.h"
#include "http/query_text.h"
#include "http/routes.h"

namespace runledger::fuzz {
namespace {

constexpr size_t kActorBytesMax = 128;           // as server.cc
constexpr size_t kIdempotencyKeyBytesMax = 128;  // as server.cc

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "fuzz harness: %s\n", what.c_str());
  std::abort();
}

std::string make_scratch_folder() {
  std::string base = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
  std::string pattern = base + "/runledger-fuzz-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) die("cannot create a scratch folder in " + base);
  return pattern;
}

bool printable(std::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x21 || static_cast<unsigned char>(c) > 0x7e) return false;
  }
  return true;
}

}  // namespace

ApiUnderTest::ApiUnderTest() : folder_(make_scratch_folder()) {
  std::string tokens_path = folder_ + "/tokens";
  {
    std::ofstream tokens(tokens_path);
    tokens << "ann reader " << kReaderToken << "\n"
           << "wes worker " << kWorkerToken << "\n"
           << "ops operator " << kOperatorToken << "\n";
  }
  Status st = auth_.load(tokens_path);
  if (!st.ok()) die("tokens: " + st.ToString());
  std::unique_ptr<EventStore> store;
  st = open_rocksdb_store(folder_ + "/data", StoreOptions{}, &store);
  if (!st.ok()) die("store: " + st.ToString());
  EngineOptions options;
  options.timers = false;
  st = Engine::open(std::shared_ptr<EventStore>(std::move(store)), clock_, options, &engine_);
  if (!st.ok()) die("engine: " + st.ToString());
  http::ApiOptions api;
  http::add_job_routes(router_, *engine_, api);
  http::add_connector_routes(router_, *engine_);
  http::add_hold_routes(router_, *engine_);
  http::add_event_routes(router_, *engine_);
  http::add_ops_routes(router_, *engine_);
}

ApiUnderTest::~ApiUnderTest() {
  engine_->shutdown();
  engine_.reset();  // the last owner of the store: closes RocksDB
  std::error_code ec;
  std::filesystem::remove_all(folder_, ec);
}

std::optional<Outcome> ApiUnderTest::call(const RequestText& in) {
  Outcome outcome;
  http::ApiRequest a;
  a.method = in.method;
  size_t query_at = in.target.find('?');
  a.path = in.target.substr(0, query_at);
  if (query_at != std::string::npos) {
    a.query = http::parse_query(std::string_view(in.target).substr(query_at + 1));
  }
  if (in.body.size() > kBodyLimitBytes) {
    outcome.reply = Reply::error(413, "body_too_large", "the body is larger than the limit");
    return outcome;
  }
  a.body = in.body;
  if (auto early = read_headers(in, a, outcome)) {
    outcome.reply = std::move(*early);
    return outcome;
  }
  if (a.method == "GET" && a.path == "/v1/events/live") return std::nullopt;
  outcome.reply = route(a, outcome);
  return outcome;
}

std::optional<Reply> ApiUnderTest::read_headers(const RequestText& in, http::ApiRequest& a,
                                                Outcome& outcome) const {
  if (const std::string* authorization = in.header("Authorization");
      authorization != nullptr && a.path != "/v1/health") {
    auto who = auth_.authenticate(*authorization);
    if (!who) return Reply::error(401, "unauthorized", "a valid bearer token is required");
    if (!http::allowed(who->role, a.method, a.path)) {
      return Reply::error(403, "forbidden", "token '" + who->name + "' may not do this");
    }
    outcome.role = who->role;
    a.actor = who->name;
  } else if (const std::string* actor = in.header("X-Runledger-Actor")) {
    if (actor->empty() || actor->size() > kActorBytesMax || !printable(*actor)) {
      return Reply::error(422, "invalid_field", "bad X-Runledger-Actor",
                          {{"field", "X-Runledger-Actor"}});
    }
    a.actor = *actor;
  }
  if (const std::string* key = in.header("Idempotency-Key")) {
    if (key->empty() || key->size() > kIdempotencyKeyBytesMax || !printable(*key)) {
      return Reply::error(422, "invalid_field", "bad Idempotency-Key",
                          {{"field", "Idempotency-Key"}});
    }
    a.idempotency_key = *key;
  }
  if (const std::string* last = in.header("Last-Event-ID")) a.last_event_id = *last;
  return std::nullopt;
}

Reply ApiUnderTest::route(http::ApiRequest& a, Outcome& outcome) const {
  const http::Router::Route* found = nullptr;
  switch (router_.route(a, &found)) {
    case http::Router::Match::kNoPath:
      return Reply::error(404, "not_found", "no such route: " + a.path);
    case http::Router::Match::kNoMethod:
      return Reply::error(405, "method_not_allowed", a.method + " is not allowed");
    case http::Router::Match::kFound:
      break;
  }
  outcome.routed = true;
  try {
    return http::settle(*engine_, found->handler(a));
  } catch (const http::ApiError& e) {
    return http::api_error_reply(e);
  } catch (const http::FieldError& e) {
    return http::field_error_reply(e);
  } catch (const std::exception& e) {
    return Reply::error(500, "internal_error", std::string("the request failed: ") + e.what());
  }
}

}  // namespace runledger::fuzz

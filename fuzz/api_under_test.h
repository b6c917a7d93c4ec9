// ApiUnderTest: the HTTP API without sockets, for the fuzzer and the corpus
// generator. A real Engine on a RocksDB store in a scratch folder (on tmpfs
// when there is one: fsync is then free), the real route tables, and the
// server's own steps below the socket (http/request_entry.h): the target,
// the Authorization / X-Runledger-Actor / Idempotency-Key headers, routing
// (404/405), and the mapping of ApiError / FieldError / other exceptions to
// replies. Only the body limit is restated: the server's parser enforces it
// on the wire, and this harness has no wire (fuzz_request_parser covers it).
//
// Authentication is on for a request that carries an Authorization header
// and off for one that does not, so one engine exercises both paths; the
// tokens are kReaderToken, kWorkerToken and kOperatorToken.
//
// The engine runs on a ManualClock with its timers off: nothing happens
// between two calls. Not thread-safe: one caller.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/io_context.hpp>
#include "engine/engine.h"
#include "fuzz/request_text.h"

#include "http/auth.h"
#include "http/blocking_pool.h"
#include "http/http_counters.h"
#include "http/live_stream.h"
#include "http/router.h"
#include "http/server_context.h"

namespace runledger::fuzz {

inline constexpr std::string_view kReaderToken = "reader-token-0123456789";
inline constexpr std::string_view kWorkerToken = "worker-token-0123456789";
inline constexpr std::string_view kOperatorToken = "operator-token-0123456789";
// As ServerOptions::body_limit_bytes by default.
inline constexpr size_t kBodyLimitBytes = 1 << 20;

// What one request did, for the checks of the caller.
struct Outcome {
  Reply reply;
  bool routed = false;             // a route handler ran
  std::optional<http::Role> role;  // authenticated as
};

class ApiUnderTest {
 public:
  // Creates the scratch folder, opens the store and the engine; aborts when
  // that fails (nothing can be fuzzed without them).
  ApiUnderTest();
  // Shuts the engine down and removes the scratch folder.
  ~ApiUnderTest();
  ApiUnderTest(const ApiUnderTest&) = delete;
  ApiUnderTest& operator=(const ApiUnderTest&) = delete;

  // The request as the server would answer it. nullopt for the live event
  // stream, which the server serves itself and never through a route.
  std::optional<Outcome> call(const RequestText& request);

  uint64_t last_seq() { return engine_->store().last_seq(); }
  Engine& engine() { return *engine_; }
  ManualClock& clock() { return clock_; }

 private:
  std::string folder_;
  ManualClock clock_;
  std::unique_ptr<Engine> engine_;
  // For /metrics: no stream runs here, no loop either.
  boost::asio::io_context io_;
  http::BlockingPool pool_{1, 1};
  http::InFlight in_flight_;
  http::HttpCounters counters_;
  std::unique_ptr<http::LiveStreams> live_;
  std::unique_ptr<http::ClaimWaiters> claims_;  // none ever waits: wait_s needs the loop
  http::Router router_;
  http::Auth auth_;
};

}  // namespace runledger::fuzz

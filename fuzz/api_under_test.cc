// ApiUnderTest: see api_under_test.h. The steps below the socket are the
// server's own (http/request_entry.h), in the order http/connection.cc runs
// them.
#include "fuzz/api_under_test.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "http/cross_site.h"
#include "http/request_entry.h"
#include "http/routes.h"

namespace runledger::fuzz {
namespace {

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
  live_ = std::make_unique<http::LiveStreams>(io_, *engine_, pool_, in_flight_, 1);
  claims_ = std::make_unique<http::ClaimWaiters>(io_, *engine_, 1);
  http::add_ops_routes(router_, *engine_, api, *live_, *claims_, counters_);
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
  http::read_target(in.target, a);
  if (in.body.size() > kBodyLimitBytes) {
    outcome.reply = Reply::error(413, "body_too_large", "the body is larger than the limit");
    return outcome;
  }
  a.body = in.body;
  // Authentication is on for a request that carries a token, off otherwise.
  const http::Auth* auth = in.header("Authorization") != nullptr ? &auth_ : nullptr;
  http::SiteRules site;
  site.local_host_only = auth == nullptr;
  site.listen_host = "127.0.0.1";
  if (auto refused = http::refuse_cross_site(in.headers, a.method, a.body.size(), site)) {
    outcome.reply = std::move(*refused);
    return outcome;
  }
  if (auto early = http::read_api_headers(in.headers, auth, a, &outcome.role)) {
    outcome.reply = std::move(*early);
    return outcome;
  }
  const http::Router::Route* route = nullptr;
  if (auto refused = http::find_route(router_, a, &route)) {
    outcome.reply = std::move(*refused);
    return outcome;
  }
  if (route->streams) return std::nullopt;  // the live stream: the connection's, not a reply
  outcome.routed = true;
  outcome.reply = http::settle(*engine_, http::run_handler(*route, a));
  return outcome;
}

}  // namespace runledger::fuzz

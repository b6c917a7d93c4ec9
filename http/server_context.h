// ServerContext: what every connection of the server shares: the engine,
// the routes, the limits, the pool for handlers that wait, and the count of
// work in flight that a stop waits for.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>

#include "engine/engine.h"
#include "http/auth.h"
#include "http/blocking_pool.h"
#include "http/claim_waiters.h"
#include "http/client_limits.h"
#include "http/cross_site.h"
#include "http/http_counters.h"
#include "http/live_stream.h"
#include "http/loop_inbox.h"
#include "http/router.h"
#include "http/server_options.h"

namespace runledger::http {

// Requests handed to the engine or the blocking pool and not answered yet.
// A stop closes it first: from then on nothing new is taken, so that every
// command that runs is one the stop waits for and answers. (A request read
// while the stop waited would otherwise be committed by the engine's last
// batch after the loop had stopped, and its reply never sent.)
class InFlight {
 public:
  // False once closed: the caller answers 503 and runs nothing.
  [[nodiscard]] bool try_add() {
    std::lock_guard<std::mutex> lk(mu_);
    if (closed_) return false;
    ++count_;
    return true;
  }
  // One more for work that holds a count already (a request admitted
  // before a stop began hands its command on): the stop waits for it anyway.
  void add_to_admitted() {
    std::lock_guard<std::mutex> lk(mu_);
    ++count_;
  }
  void done() {
    std::lock_guard<std::mutex> lk(mu_);
    if (--count_ == 0) cv_.notify_all();
  }
  // Closes, then waits until nothing is in flight; false if `limit` passed
  // first.
  bool close_and_wait_idle(std::chrono::milliseconds limit) {
    std::unique_lock<std::mutex> lk(mu_);
    closed_ = true;
    return cv_.wait_for(lk, limit, [this] { return count_ == 0; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  size_t count_ = 0;     // GUARDED_BY(mu_)
  bool closed_ = false;  // GUARDED_BY(mu_)
};

struct ServerContext {
  ServerContext(Engine& e, const ServerOptions& o, const Router& r, const Auth& a, BlockingPool& p)
      : engine(e),
        options(o),
        router(r),
        auth(a),
        pool(p),
        clients(o.connections_per_client_max, o.live_streams_per_client_max) {}

  Engine& engine;
  const ServerOptions& options;
  const Router& router;
  const Auth& auth;
  BlockingPool& pool;
  // Set by the server once the tokens are loaded (authentication on or off).
  SiteRules site;
  // Set by the server once its loop exists; the engine's replies come back
  // through it, and claims that wait for work park in `claims`.
  LoopInbox* replies = nullptr;
  ClaimWaiters* claims = nullptr;
  LiveStreams* live = nullptr;
  InFlight in_flight;
  HttpCounters counters;
  ClientLimits clients;
  std::atomic<size_t> connections{0};
  std::atomic<bool> stopping{false};
};

}  // namespace runledger::http

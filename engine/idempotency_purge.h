// IdempotencyPurge: drops idempotency records older than the retention
// (docs/api.md: keys are kept at least 24 hours, across restarts), so the
// idempotency column family grows with recent traffic, not with history.
// A purge scans the whole family, so it runs on a thread of its own: the
// sequencer and the timers never wait for it.
// Thread-compatible: one owner (the engine's timer thread) calls it.
#pragma once

#include <cstdint>
#include <future>

#include "events/event_store.h"

namespace runledger {

class IdempotencyPurge {
 public:
  IdempotencyPurge(EventStore& store, int64_t keep_ms, int64_t every_ms);
  ~IdempotencyPurge();  // waits for a purge in flight: the store must outlive it
  IdempotencyPurge(const IdempotencyPurge&) = delete;
  IdempotencyPurge& operator=(const IdempotencyPurge&) = delete;

  // Starts a purge of the records older than now_ms - keep_ms, unless one is
  // running or the last one started less than every_ms ago.
  void maybe_start(int64_t now_ms);
  // Waits for the purge in flight, if any; its result (Ok when none ran).
  Status wait();

 private:
  EventStore& store_;
  const int64_t keep_ms_;
  const int64_t every_ms_;
  bool started_ = false;
  int64_t last_start_ms_ = 0;
  std::future<Status> running_;
};

}  // namespace runledger

#include "engine/idempotency_purge.h"

#include <chrono>

namespace runledger {

IdempotencyPurge::IdempotencyPurge(EventStore& store, int64_t keep_ms, int64_t every_ms)
    : store_(store), keep_ms_(keep_ms), every_ms_(every_ms) {}

IdempotencyPurge::~IdempotencyPurge() { wait().IgnoreError(); }

void IdempotencyPurge::maybe_start(int64_t now_ms) {
  if (running_.valid() && running_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    return;
  }
  if (started_ && now_ms - last_start_ms_ < every_ms_) return;
  wait().IgnoreError();  // a failed purge is retried at the next interval
  started_ = true;
  last_start_ms_ = now_ms;
  const int64_t before_ms = now_ms - keep_ms_;
  running_ = std::async(std::launch::async,
                        [this, before_ms] { return store_.purge_idempotency(before_ms); });
}

Status IdempotencyPurge::wait() {
  if (!running_.valid()) return Status::Ok();
  return running_.get();
}

}  // namespace runledger

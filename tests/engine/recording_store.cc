// RecordingStore: see recording_store.h.
#include "tests/engine/recording_store.h"

#include <thread>

namespace runledger::testing {

Status RecordingStore::append(const AppendBatch& batch) {
  if (int64_t us = delay_us_.load(); us > 0) {
    std::this_thread::sleep_for(std::chrono::microseconds(us));
  }
  Status st = ForwardingStore::append(batch);
  if (!st.ok()) {
    failed_.fetch_add(1);
    return st;
  }
  AppendRecord r;
  r.events = batch.events.size();
  if (!batch.events.empty()) {
    r.first_seq = batch.events.front().seq;
    r.last_seq = batch.events.back().seq;
  }
  r.idempotency_records = batch.idempotency.size();
  r.views = batch.views.size();
  r.snapshot = batch.snapshot.has_value();
  if (r.snapshot) r.snapshot_seq = batch.events.empty() ? last_seq() : r.last_seq;
  {
    std::lock_guard<std::mutex> lk(mu_);
    records_.push_back(r);
  }
  // Published only after the inner store said the batch is durable.
  if (r.last_seq > durable_seq_.load()) durable_seq_.store(r.last_seq, std::memory_order_release);
  return st;
}

size_t RecordingStore::appends() const {
  std::lock_guard<std::mutex> lk(mu_);
  return records_.size();
}

std::vector<AppendRecord> RecordingStore::records() const {
  std::lock_guard<std::mutex> lk(mu_);
  return records_;
}

}  // namespace runledger::testing

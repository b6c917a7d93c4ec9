// RecordingStore: an EventStore decorator for engine tests. It forwards
// everything to the store it wraps and records what each append carried and
// when it completed, so a test can count group commits and check that a
// reply never overtook the append that made it durable. It can also slow each
// append down, the way a slow disk does, which lets commands pile up behind
// the one being written.
//
// Thread-safe: the sequencer appends while test threads read the records.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "events/forwarding_store.h"

namespace runledger::testing {

// One append as the inner store acknowledged it.
struct AppendRecord {
  uint64_t first_seq = 0;  // 0 when the append carried no events
  uint64_t last_seq = 0;
  size_t events = 0;
  size_t idempotency_records = 0;
  size_t views = 0;
  bool snapshot = false;
  uint64_t snapshot_seq = 0;  // the last seq it covers (an append of a snapshot alone: the log's)
};

class RecordingStore final : public ForwardingStore {
 public:
  explicit RecordingStore(std::shared_ptr<EventStore> inner) : ForwardingStore(std::move(inner)) {}

  // Every later append sleeps this long before writing.
  void set_append_delay(std::chrono::microseconds d) { delay_us_.store(d.count()); }

  Status append(const AppendBatch& batch) override;

  // Appends the inner store acknowledged (OK), and those it refused.
  size_t appends() const;
  size_t failed_appends() const { return failed_.load(); }
  // The highest seq of any acknowledged append: everything up to it is durable.
  uint64_t durable_seq() const { return durable_seq_.load(std::memory_order_acquire); }
  std::vector<AppendRecord> records() const;

 private:
  std::atomic<int64_t> delay_us_{0};
  std::atomic<uint64_t> durable_seq_{0};
  std::atomic<size_t> failed_{0};
  mutable std::mutex mu_;
  std::vector<AppendRecord> records_;  // GUARDED_BY(mu_)
};

}  // namespace runledger::testing

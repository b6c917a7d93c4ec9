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

#include "events/event_store.h"

namespace runledger::testing {

// Forwards every call to `inner`; subclasses override what they watch.
class ForwardingStore : public EventStore {
 public:
  explicit ForwardingStore(std::shared_ptr<EventStore> inner) : inner_(std::move(inner)) {}

  Status append(const AppendBatch& batch) override { return inner_->append(batch); }
  uint64_t last_seq() const override { return inner_->last_seq(); }
  Hash last_hash() const override { return inner_->last_hash(); }
  Status read_range(uint64_t after, uint64_t until, const EventVisitor& visit) const override {
    return inner_->read_range(after, until, visit);
  }
  Status read_event(uint64_t seq, std::string* bytes) const override {
    return inner_->read_event(seq, bytes);
  }
  Status read_stream(std::string_view stream, uint64_t until_seq,
                     const EventVisitor& visit) const override {
    return inner_->read_stream(stream, until_seq, visit);
  }
  Status stream_version(std::string_view stream, uint32_t* version) const override {
    return inner_->stream_version(stream, version);
  }
  Status get_idempotency(std::string_view key, std::string* value) const override {
    return inner_->get_idempotency(key, value);
  }
  Status purge_idempotency(int64_t before_ms) override {
    return inner_->purge_idempotency(before_ms);
  }
  Status get_view(std::string_view key, std::string* value) const override {
    return inner_->get_view(key, value);
  }
  Status scan_views(std::string_view prefix, std::string_view after_key,
                    const std::function<bool(std::string_view key, std::string_view value)>& visit)
      const override {
    return inner_->scan_views(prefix, after_key, visit);
  }
  Status get_snapshot(std::string* value) const override { return inner_->get_snapshot(value); }
  Status refresh() override { return inner_->refresh(); }

  EventStore& inner() { return *inner_; }

 private:
  std::shared_ptr<EventStore> inner_;
};

// One append as the inner store acknowledged it.
struct AppendRecord {
  uint64_t first_seq = 0;  // 0 when the append carried no events
  uint64_t last_seq = 0;
  size_t events = 0;
  size_t idempotency_records = 0;
  size_t views = 0;
  bool snapshot = false;
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

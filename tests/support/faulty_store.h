// FaultyStore: an EventStore that forwards to a real one and can be told to
// refuse appends with kIoError, writing nothing, the way a full or failing
// disk does. Engine tests use it to drive the refusing state (503) and the
// recovery that follows. Header-only so any test binary can use it.
//
// Thread-safe like the store it wraps: the failure switches may be flipped
// from a test thread while the engine's sequencer appends.
#pragma once

#include <atomic>
#include <memory>
#include <utility>

#include "events/event_store.h"

namespace runledger::testing {

class FaultyStore final : public EventStore {
 public:
  // Owns `inner`.
  explicit FaultyStore(std::unique_ptr<EventStore> inner)
      : owned_(std::move(inner)), inner_(owned_.get()) {}
  // Borrows `inner`, which must outlive this store.
  explicit FaultyStore(EventStore* inner) : inner_(inner) {}

  // The next `n` appends fail (after any already scheduled).
  void fail_next_appends(int n) { fail_next_.fetch_add(n); }
  // Every append fails until called again with false ("the disk is full").
  void fail_all_appends(bool on) { fail_all_.store(on); }
  // Appends refused so far.
  int failed_appends() const { return failed_.load(); }
  EventStore& inner() { return *inner_; }

  Status append(const AppendBatch& batch) override {
    if (fail_all_.load() || take_one_failure()) {
      failed_.fetch_add(1);
      return Status::IoError("injected write failure (nothing was written)");
    }
    return inner_->append(batch);
  }
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

 private:
  bool take_one_failure() {
    int n = fail_next_.load();
    while (n > 0) {
      if (fail_next_.compare_exchange_weak(n, n - 1)) return true;
    }
    return false;
  }

  std::unique_ptr<EventStore> owned_;
  EventStore* inner_;
  std::atomic<int> fail_next_{0};
  std::atomic<bool> fail_all_{false};
  std::atomic<int> failed_{0};
};

}  // namespace runledger::testing

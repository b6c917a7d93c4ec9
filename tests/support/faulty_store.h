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

#include "events/forwarding_store.h"

namespace runledger::testing {

class FaultyStore final : public ForwardingStore {
 public:
  // Owns `inner`.
  explicit FaultyStore(std::unique_ptr<EventStore> inner) : ForwardingStore(std::move(inner)) {}
  // Borrows `inner`, which must outlive this store.
  explicit FaultyStore(EventStore* inner) : ForwardingStore(inner) {}

  // The next `n` appends fail (after any already scheduled).
  void fail_next_appends(int n) { fail_next_.fetch_add(n); }
  // Every append fails until called again with false ("the disk is full").
  void fail_all_appends(bool on) { fail_all_.store(on); }
  // Appends refused so far.
  int failed_appends() const { return failed_.load(); }

  Status append(const AppendBatch& batch) override {
    if (fail_all_.load() || take_one_failure()) {
      failed_.fetch_add(1);
      return Status::IoError("injected write failure (nothing was written)");
    }
    return ForwardingStore::append(batch);
  }

 private:
  bool take_one_failure() {
    int n = fail_next_.load();
    while (n > 0) {
      if (fail_next_.compare_exchange_weak(n, n - 1)) return true;
    }
    return false;
  }

  std::atomic<int> fail_next_{0};
  std::atomic<bool> fail_all_{false};
  std::atomic<int> failed_{0};
};

}  // namespace runledger::testing

// FaultyStore: an EventStore that forwards to a real one and can be told to
// refuse appends with kIoError, writing nothing, the way a full or failing
// disk does, or to write an append and answer kInDoubt, the way a commit
// whose confirmation was lost does. Engine tests use it to drive the
// refusing state (503) and the recovery that follows. Header-only so any
// test binary can use it.
//
// Thread-safe like the store it wraps: the failure switches may be flipped
// from a test thread while the engine's sequencer appends.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
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
  // The next `n` appends are written, then answered kInDoubt.
  void doubt_next_appends(int n) { doubt_next_.fetch_add(n); }
  // Appends refused so far.
  int failed_appends() const { return failed_.load(); }
  // While paused, an append waits before it does anything (a disk or a
  // database that stopped answering); appends_waiting() counts those.
  void pause_appends() {
    std::lock_guard lk(pause_mu_);
    paused_ = true;
  }
  void resume_appends() {
    {
      std::lock_guard lk(pause_mu_);
      paused_ = false;
    }
    pause_cv_.notify_all();
  }
  int appends_waiting() const { return waiting_.load(); }

  Status append(const AppendBatch& batch) override {
    {
      std::unique_lock lk(pause_mu_);
      waiting_.fetch_add(1);
      pause_cv_.wait(lk, [this] { return !paused_; });
      waiting_.fetch_sub(1);
    }
    if (fail_all_.load() || take_one(fail_next_)) {
      failed_.fetch_add(1);
      return Status::IoError("injected write failure (nothing was written)");
    }
    Status st = ForwardingStore::append(batch);
    if (st.ok() && take_one(doubt_next_)) {
      return Status::InDoubt("injected lost confirmation (the batch was written)");
    }
    return st;
  }

 private:
  static bool take_one(std::atomic<int>& scheduled) {
    int n = scheduled.load();
    while (n > 0) {
      if (scheduled.compare_exchange_weak(n, n - 1)) return true;
    }
    return false;
  }

  std::atomic<int> fail_next_{0};
  std::atomic<int> doubt_next_{0};
  std::mutex pause_mu_;
  std::condition_variable pause_cv_;
  bool paused_ = false;  // guarded by pause_mu_
  std::atomic<int> waiting_{0};
  std::atomic<bool> fail_all_{false};
  std::atomic<int> failed_{0};
};

}  // namespace runledger::testing

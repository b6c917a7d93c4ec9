// Metrics: the engine's counters, rendered in the Prometheus text format.
// The sequencer counts what it decides and the writer thread what it made
// durable, so every method takes the one lock (a few times per batch).
// Thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "engine/view_index.h"

namespace runledger {

struct State;

class Metrics {
 public:
  // Upper bounds of the latency buckets, in milliseconds.
  static constexpr std::array<double, 13> kLatencyBucketsMs = {0.1, 0.25, 0.5, 1,   2.5, 5,   10,
                                                               25,  50,   100, 250, 500, 1000};
  static constexpr std::array<double, 8> kBatchBuckets = {1, 2, 4, 8, 16, 64, 256, 1024};

  // `type` and `outcome` are names with static storage (string literals):
  // counting keys on the pointers costs no string per command.
  void command(const char* type, const char* outcome, double latency_ms);
  void batch(size_t commands, size_t events);
  void lease_expiries(uint64_t n) {
    MutexLock lk(mu_);
    lease_expiries_ += n;
  }
  void write_failure() {
    MutexLock lk(mu_);
    ++write_failures_;
  }
  // A batch that the writer closed and handed over to itself because the
  // sequencer slept when the write before it ended (Engine::take_open_batch).
  void writer_hand_over() {
    MutexLock lk(mu_);
    ++writer_hand_overs_;
  }
  uint64_t writer_hand_overs() const {
    MutexLock lk(mu_);
    return writer_hand_overs_;
  }
  void replayed(uint64_t events, double seconds) {
    MutexLock lk(mu_);
    replayed_events_ = events;
    replay_seconds_ = seconds;
  }

  // `finished`: the stored finished jobs by state (Engine::stored_finished_jobs).
  std::string render(const State& s, bool writable,
                     const view_index::FinishedCounts& finished) const;

 private:
  mutable Mutex mu_;
  std::map<std::pair<const char*, const char*>, uint64_t> commands_ RL_GUARDED_BY(mu_);
  std::array<uint64_t, kLatencyBucketsMs.size() + 1> latency_counts_ RL_GUARDED_BY(mu_){};
  double latency_sum_ms_ RL_GUARDED_BY(mu_) = 0;
  uint64_t latency_count_ RL_GUARDED_BY(mu_) = 0;
  std::array<uint64_t, kBatchBuckets.size() + 1> batch_counts_ RL_GUARDED_BY(mu_){};
  uint64_t batch_commands_sum_ RL_GUARDED_BY(mu_) = 0;
  uint64_t fsync_batches_ RL_GUARDED_BY(mu_) = 0;
  uint64_t events_appended_ RL_GUARDED_BY(mu_) = 0;
  uint64_t lease_expiries_ RL_GUARDED_BY(mu_) = 0;
  uint64_t write_failures_ RL_GUARDED_BY(mu_) = 0;
  uint64_t writer_hand_overs_ RL_GUARDED_BY(mu_) = 0;
  uint64_t replayed_events_ RL_GUARDED_BY(mu_) = 0;
  double replay_seconds_ RL_GUARDED_BY(mu_) = 0;
};

}  // namespace runledger

// ClaimWaiters: the claims that wait for work (`POST /v1/jobs/claim` with
// `wait_s`, docs/api.md "Jobs"), parked on the event loop without a thread.
//
// A claim that found nothing is parked here until a job may be ready for it
// or its wait ends. While any claim waits, a timer on the loop looks every
// kPollMs at the log's last seq: when it moved (an enqueue, an attempt that
// ended and freed its target, a hold released...), and at least every
// kRetryEveryMs whatever happened (a `not_before` or a retry's backoff that
// passed writes no event), the waiting claims are tried again. Claims wait
// in groups of the same `kinds`; of each group only the oldest is tried,
// and the next one only when it got a job, so a thousand idle workers cost
// one claim per wake, not a thousand, and the oldest waiting claim is served
// first. A claim whose wait ends is given up (its 204).
//
// At most `max` claims wait at once; the one beyond is refused (503), never
// left to stall. Loop thread only, but for waiting_now() and metrics_text().
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <string>
#include <unordered_map>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "engine/engine.h"

namespace runledger::http {

class ClaimWaiters {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr int kPollMs = 20;
  static constexpr int kRetryEveryMs = 1000;

  ClaimWaiters(boost::asio::io_context& io, Engine& engine, size_t max);

  struct Callbacks {
    std::function<void()> try_again;  // submits the claim once more
    std::function<void()> give_up;    // its wait ended: answers 204
  };
  // Parks a claim of `group` until `deadline`: its id, or 0 when `max`
  // claims wait already.
  uint64_t park(std::string group, Clock::time_point deadline, Callbacks callbacks);
  // The reply to a claim tried again came: `got_work` (a job, or anything
  // but a 204) ends its wait and tries the next of its group; a 204 leaves
  // it waiting in its place, unless its wait ended meanwhile (then false:
  // the caller answers 204).
  bool tried(uint64_t id, bool got_work);
  // Answers every waiting claim (give_up) and parks no more.
  void stop();
  size_t waiting() const { return entries_.size(); }
  // How many wait, read from any thread: `runledger_claims_waiting` of /metrics.
  size_t waiting_now() const { return waiting_now_.load(std::memory_order_relaxed); }
  std::string metrics_text() const;

 private:
  struct Entry {
    uint64_t id;
    std::string group;
    Clock::time_point deadline;
    bool trying = false;
    Callbacks callbacks;
  };
  using Entries = std::list<Entry>;

  void arm();
  void on_timer();
  void wake_all();
  void wake_group(const std::string& group);
  void try_entry(uint64_t id);
  // After each change of entries_.
  void counted() { waiting_now_.store(entries_.size(), std::memory_order_relaxed); }

  boost::asio::steady_timer timer_;
  Engine& engine_;
  const size_t max_;
  Entries entries_;  // oldest first
  std::unordered_map<uint64_t, Entries::iterator> by_id_;
  uint64_t next_id_ = 1;
  bool armed_ = false;
  bool stopped_ = false;
  uint64_t seen_seq_ = 0;
  Clock::time_point last_wake_{};
  std::atomic<size_t> waiting_now_{0};
};

}  // namespace runledger::http

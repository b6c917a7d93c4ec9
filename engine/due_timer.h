// DueTimer: a Boost.Asio steady timer on its own thread that calls back when
// the next lease expiry or schedule slot is due, so expiries are recorded
// promptly (well within a second) rather than at the next request or
// restart. It also fires at least every `idle_interval_ms` as a safety net.
// Thread-safe: arm() may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>

#include "engine/clock.h"

namespace runledger {

class DueTimer {
 public:
  static constexpr int64_t kIdleIntervalMs = 1000;

  DueTimer(const Clock& clock, std::function<void()> on_due);
  ~DueTimer();
  DueTimer(const DueTimer&) = delete;
  DueTimer& operator=(const DueTimer&) = delete;

  // The next due time (ms since the epoch, clock time); 0 when none.
  void arm(int64_t due_ms);
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace runledger

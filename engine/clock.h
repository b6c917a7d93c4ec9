// Clock: where the engine gets "now". The server uses the system clock; tests
// and the simulator use a ManualClock, where time moves only when told to.
// Deciders never read a clock: the engine puts now into each command.
// Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>

namespace runledger {

class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds since the Unix epoch.
  virtual int64_t now_ms() const = 0;
};

class SystemClock final : public Clock {
 public:
  int64_t now_ms() const override;
};

class ManualClock final : public Clock {
 public:
  explicit ManualClock(int64_t start_ms = 1'700'000'000'000) : now_(start_ms) {}
  int64_t now_ms() const override { return now_.load(std::memory_order_acquire); }
  void advance_ms(int64_t d) { now_.fetch_add(d, std::memory_order_acq_rel); }
  void set_ms(int64_t t) { now_.store(t, std::memory_order_release); }

 private:
  std::atomic<int64_t> now_;
};

}  // namespace runledger

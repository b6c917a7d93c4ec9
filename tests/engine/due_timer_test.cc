// DueTimer: wakes the engine when the next lease expiry or schedule slot is
// due, and once a second (kIdleIntervalMs) when nothing is. These run the
// real timer against a ManualClock that stands still, so a due time `d` ms
// after the clock's now is a wait of `d` ms of real time. Each test asks for
// a wake-up 50 ms away and checks that it comes before the idle second: a
// due time that was lost would only be seen by the idle wake-up.
#include "engine/due_timer.h"

#include <chrono>
#include <condition_variable>
#include <mutex>

#include <gtest/gtest.h>

namespace runledger::testing {
namespace {

using std::chrono::milliseconds;

constexpr int64_t kSoonMs = 50;
constexpr int64_t kMuchLaterMs = 60'000;
// Well under DueTimer::kIdleIntervalMs, well over kSoonMs.
constexpr milliseconds kBeforeIdle{900};

class Wakeups {
 public:
  void add() {
    std::lock_guard<std::mutex> lk(mu_);
    ++count_;
    cv_.notify_all();
  }
  // True once `n` wake-ups happened; false if `limit` passed first.
  bool wait_for(int n, milliseconds limit) {
    std::unique_lock<std::mutex> lk(mu_);
    return cv_.wait_for(lk, limit, [&] { return count_ >= n; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int count_ = 0;
};

TEST(DueTimer, AnEarlierDueTimeReplacesTheIdleWakeUp) {
  // Given a timer whose only wake-up is the idle one, a second away
  ManualClock clock;
  Wakeups wakeups;
  DueTimer timer(clock, [&] { wakeups.add(); });
  // When something falls due 50 ms from now
  timer.arm(clock.now_ms() + kSoonMs);
  // Then the timer fires before the idle second
  EXPECT_TRUE(wakeups.wait_for(1, kBeforeIdle));
}

TEST(DueTimer, ALaterDueTimeKeepsTheEarlierWakeUp) {
  // Given a wake-up 50 ms away
  ManualClock clock;
  Wakeups wakeups;
  DueTimer timer(clock, [&] { wakeups.add(); });
  timer.arm(clock.now_ms() + kSoonMs);
  // When a later due time and no due time are armed (as after every batch)
  timer.arm(clock.now_ms() + kMuchLaterMs);
  timer.arm(0);
  // Then the 50 ms wake-up still fires
  EXPECT_TRUE(wakeups.wait_for(1, kBeforeIdle));
}

TEST(DueTimer, ADueTimeArmedAfterAWakeUpIsKept) {
  // Given a timer that woke up once and set its next idle wake-up
  ManualClock clock;
  Wakeups wakeups;
  DueTimer timer(clock, [&] { wakeups.add(); });
  timer.arm(clock.now_ms() + kSoonMs);
  ASSERT_TRUE(wakeups.wait_for(1, kBeforeIdle));
  // When something falls due 50 ms from now
  timer.arm(clock.now_ms() + kSoonMs);
  // Then it fires again before the idle second
  EXPECT_TRUE(wakeups.wait_for(2, kBeforeIdle));
}

}  // namespace
}  // namespace runledger::testing

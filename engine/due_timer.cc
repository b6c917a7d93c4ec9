#include "engine/due_timer.h"

#include <algorithm>
#include <atomic>
#include <chrono>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "base/thread_name.h"

namespace runledger {

struct DueTimer::Impl {
  const Clock& clock;
  std::function<void()> on_due;
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work{io.get_executor()};
  boost::asio::steady_timer timer{io};
  // Clock time the timer is set for (0: none). Written on the io thread
  // only; arm()'s callers read it to skip the post (and the wake-up of this
  // thread) when the wake-up set already comes first.
  std::atomic<int64_t> scheduled_ms{0};
  std::thread thread;

  Impl(const Clock& c, std::function<void()> f) : clock(c), on_due(std::move(f)) {}

  // REQUIRES: io thread.
  void set(int64_t due_ms) {
    const int64_t now = clock.now_ms();
    const int64_t idle_due = now + kIdleIntervalMs;
    const int64_t target = due_ms > 0 ? std::min(due_ms, idle_due) : idle_due;
    const int64_t scheduled = scheduled_ms.load(std::memory_order_relaxed);
    if (scheduled != 0 && scheduled <= target) return;  // an earlier wake-up is set
    scheduled_ms.store(target, std::memory_order_release);
    timer.expires_after(std::chrono::milliseconds(std::max<int64_t>(0, target - now)));
    timer.async_wait([this](const boost::system::error_code& ec) {
      if (ec) return;  // cancelled by a re-arm or stop
      scheduled_ms.store(0, std::memory_order_release);
      on_due();
      set(0);
    });
  }
};

DueTimer::DueTimer(const Clock& clock, std::function<void()> on_due)
    : impl_(std::make_unique<Impl>(clock, std::move(on_due))) {
  impl_->thread = std::thread([this] {
    name_this_thread("rl-due-timer");
    impl_->io.run();
  });
  arm(0);
}

DueTimer::~DueTimer() { stop(); }

void DueTimer::arm(int64_t due_ms) {
  // The engine arms after every batch, and the next due time rarely moves
  // earlier: posting each time would wake this thread a thousand times a
  // second under load for nothing. Nothing is lost by skipping: set() would
  // keep the earlier wake-up, and a wake-up that fires meanwhile runs
  // on_due, whose own batch arms again from the State after it.
  const int64_t scheduled = impl_->scheduled_ms.load(std::memory_order_acquire);
  if (scheduled != 0 && (due_ms == 0 || due_ms >= scheduled)) return;
  boost::asio::post(impl_->io, [this, due_ms] {
    // Re-arming earlier cancels the pending wait; its handler sees an error.
    const int64_t set_for = impl_->scheduled_ms.load(std::memory_order_relaxed);
    if (set_for != 0 && due_ms > 0 && due_ms < set_for) {
      impl_->scheduled_ms.store(0, std::memory_order_release);
      impl_->timer.cancel();
    }
    impl_->set(due_ms);
  });
}

void DueTimer::stop() {
  if (!impl_->thread.joinable()) return;
  impl_->work.reset();
  boost::asio::post(impl_->io, [this] {
    impl_->timer.cancel();
    impl_->io.stop();
  });
  impl_->thread.join();
}

}  // namespace runledger

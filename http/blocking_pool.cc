#include "http/blocking_pool.h"

#include <algorithm>

#include "base/thread_name.h"

namespace runledger::http {

BlockingPool::BlockingPool(size_t threads, size_t queue_max) : queue_max_(queue_max) {
  threads = std::max<size_t>(threads, 1);
  threads_.reserve(threads);
  for (size_t i = 0; i < threads; ++i) {
    threads_.emplace_back([this] {
      name_this_thread("rl-http-pool");
      work();
    });
  }
}

BlockingPool::~BlockingPool() { shutdown(); }

bool BlockingPool::post(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (stopping_ || tasks_.size() >= queue_max_) return false;
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
  return true;
}

void BlockingPool::shutdown() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lk(mu_);
    stopping_ = true;
    threads.swap(threads_);
  }
  cv_.notify_all();
  for (auto& t : threads) t.join();
}

void BlockingPool::work() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lk(mu_);
      cv_.wait(lk, [&] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

}  // namespace runledger::http

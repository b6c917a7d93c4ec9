// BlockingPool: the threads that run the handlers which may wait (reads go
// through the sequencer and so wait for a group commit; store scans wait on
// the disk; the live streams' reads of new events), so the event loop that
// serves the sockets never does.
//
// A fixed number of threads and a bounded queue: past `queue_max` waiting
// tasks, post() refuses and the caller answers 503 at once.
// Thread-safe.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace runledger::http {

class BlockingPool {
 public:
  BlockingPool(size_t threads, size_t queue_max);
  ~BlockingPool();
  BlockingPool(const BlockingPool&) = delete;
  BlockingPool& operator=(const BlockingPool&) = delete;

  // Queues `task`; false (task dropped) when the queue is full or the pool
  // is shutting down.
  bool post(std::function<void()> task);
  // Runs what is queued, then joins the threads. Idempotent.
  void shutdown();

 private:
  void work();

  const size_t queue_max_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;  // GUARDED_BY(mu_)
  bool stopping_ = false;                    // GUARDED_BY(mu_)
  std::vector<std::thread> threads_;
};

}  // namespace runledger::http

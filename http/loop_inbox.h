// LoopInbox: hands work from other threads to the event loop, waking the
// loop once per burst instead of once per task.
//
// Why: the engine's writer finishes a whole group commit at once, a dozen
// or a thousand replies. Posting each to its connection's strand from the
// writer took the loop's scheduler lock and interrupted its epoll_wait once
// per reply, and the two threads fought over that lock on a 2-core machine.
// Here the writer appends under a lock that only the loop's drain shares,
// and posts a drain only when none is queued or running: a drain keeps
// taking what arrives while it runs, so the replies the writer hands over
// one by one while the loop is already awake ride along.
//
// Thread-safe: deliver() from any thread; the tasks run on the loop.
#pragma once

#include <functional>
#include <mutex>
#include <vector>

#include <boost/asio/io_context.hpp>

namespace runledger::http {

class LoopInbox {
 public:
  explicit LoopInbox(boost::asio::io_context& loop) : loop_(loop) {}
  LoopInbox(const LoopInbox&) = delete;
  LoopInbox& operator=(const LoopInbox&) = delete;

  // Runs `task` on the loop, after the tasks delivered before it.
  void deliver(std::function<void()> task);

 private:
  void drain();

  boost::asio::io_context& loop_;
  std::mutex mu_;
  std::vector<std::function<void()>> waiting_;  // GUARDED_BY(mu_)
  bool draining_ = false;                       // GUARDED_BY(mu_): a drain is queued or running
};

}  // namespace runledger::http

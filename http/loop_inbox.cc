// LoopInbox: see loop_inbox.h.
#include "http/loop_inbox.h"

#include <boost/asio/post.hpp>

namespace runledger::http {

void LoopInbox::deliver(std::function<void()> task) {
  bool post = false;
  {
    std::lock_guard<std::mutex> lk(mu_);
    waiting_.push_back(std::move(task));
    post = !draining_;
    draining_ = true;
  }
  if (post) boost::asio::post(loop_, [this] { drain(); });
}

// One drain at a time, on whichever loop thread runs it. It ends only when
// it finds the inbox empty, under the lock deliver() takes, so no task is
// left behind without a drain to come.
void LoopInbox::drain() {
  std::vector<std::function<void()>> tasks;
  for (;;) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (waiting_.empty()) {
        draining_ = false;
        return;
      }
      tasks.swap(waiting_);
    }
    for (auto& task : tasks) task();
    tasks.clear();
  }
}

}  // namespace runledger::http

// The group commit's writer thread: see batch_writer.h.
#include "engine/batch_writer.h"

#include <utility>

#include "base/assert.h"
#include "base/thread_name.h"

namespace runledger {

BatchWriter::BatchWriter(EventStore& store, Hooks hooks) : store_(store), hooks_(std::move(hooks)) {
  thread_ = std::thread([this] {
    name_this_thread("rl-writer");
    loop();
  });
}

BatchWriter::~BatchWriter() { stop(); }

void BatchWriter::hand(std::unique_ptr<WriteUnit> unit) {
  {
    MutexLock lk(mu_);
    RL_ASSERT(!busy_, "a batch is handed over only once the one before is settled");
    next_ = std::move(unit);
    busy_ = true;
  }
  cv_.notify_all();
}

bool BatchWriter::settle() {
  UniqueLock lk(mu_);
  while (busy_) cv_.wait(lk.native());
  const bool failed = last_failed_;
  last_failed_ = false;
  return failed;
}

bool BatchWriter::busy() {
  MutexLock lk(mu_);
  return busy_;
}

void BatchWriter::stop() {
  {
    MutexLock lk(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void BatchWriter::loop() {
  for (;;) {
    std::unique_ptr<WriteUnit> unit;
    {
      UniqueLock lk(mu_);
      while (next_ == nullptr && !stopping_) cv_.wait(lk.native());
      if (next_ == nullptr) return;
      unit = std::move(next_);
    }
    // A unit with nothing to write (reads only) still waits for the one
    // before it: its replies go out in order.
    const Status outcome = unit->out.empty() ? Status::Ok() : store_.append(unit->out);
    if (!outcome.ok()) hooks_.failed(outcome);
    {
      MutexLock lk(mu_);
      busy_ = false;
      last_failed_ = !outcome.ok();
    }
    cv_.notify_all();
    hooks_.written(std::move(unit), outcome);
  }
}

}  // namespace runledger

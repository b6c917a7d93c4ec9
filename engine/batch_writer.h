// BatchWriter: the writer thread of the engine's group commit
// (docs/architecture.md "A command's path"). It takes one batch at a time,
// appends it to the store with one synced write, and tells its owner how
// the write ended, on its own thread, while the owner decides the next
// batch.
//
// At most one batch is with it: the owner hands a batch over only once
// settle() says the one before is done. So the log is written in the order
// the batches were decided, and a failed write is known before anything is
// handed over on top of it.
//
// The outcome of a write reaches the owner in two steps, in this order:
//  1. `failed`, only when the write failed, before settle() can return: the
//     owner stops taking writes there, so that nothing decided after the
//     failure is seen before the owner knows of it;
//  2. `written`, with the batch, once settle() returns: the owner releases
//     the batch's replies there, and may hand the next batch over from
//     inside it (the writer takes it as soon as `written` returns).
//
// Thread-safe: hand(), settle() and busy() may be called from any thread,
// including the writer's own from inside `written`.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <thread>

#include "base/mutex.h"
#include "base/status.h"
#include "base/thread_annotations.h"
#include "events/event_store.h"

namespace runledger {

// What the writer writes. The engine's batch extends it with the requests
// whose replies wait for the write.
struct WriteUnit {
  virtual ~WriteUnit() = default;
  AppendBatch out;  // empty: nothing is written, the unit waits its turn only
};

class BatchWriter {
 public:
  struct Hooks {
    std::function<void(const Status& why)> failed;
    std::function<void(std::unique_ptr<WriteUnit> unit, const Status& outcome)> written;
  };

  // Starts the writer thread. `store` must outlive the writer.
  BatchWriter(EventStore& store, Hooks hooks);
  // stop().
  ~BatchWriter();
  BatchWriter(const BatchWriter&) = delete;
  BatchWriter& operator=(const BatchWriter&) = delete;

  // Gives `unit` to the writer. The writer must have none (settle() first):
  // handing over a second batch is a bug, and stops the process.
  void hand(std::unique_ptr<WriteUnit> unit) RL_EXCLUDES(mu_);
  // Waits until the writer has no batch. True when the last write failed:
  // that is told once, to the first settle() after it.
  bool settle() RL_EXCLUDES(mu_);
  // Whether a batch is with the writer (handed over, not yet written).
  bool busy() RL_EXCLUDES(mu_);
  // Writes the batch it has, if any, and joins the thread. Idempotent.
  void stop() RL_EXCLUDES(mu_);

 private:
  void loop() RL_EXCLUDES(mu_);

  EventStore& store_;
  const Hooks hooks_;
  Mutex mu_;
  std::condition_variable cv_;
  std::unique_ptr<WriteUnit> next_ RL_GUARDED_BY(mu_);
  bool busy_ RL_GUARDED_BY(mu_) = false;         // next_, or being written
  bool last_failed_ RL_GUARDED_BY(mu_) = false;  // not yet told to settle()
  bool stopping_ RL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace runledger

// A std::mutex the thread-safety analysis knows (base/thread_annotations.h),
// and its locks. libstdc++'s mutex carries no annotations, so a member
// marked RL_GUARDED_BY(a std::mutex) could not be checked.
//
//   Mutex mu_;
//   int n_ RL_GUARDED_BY(mu_);
//   void add() { MutexLock lk(mu_); ++n_; }
//
// A condition variable waits on a UniqueLock's native() lock: the analysis
// takes the mutex as held across the wait, as the code after it may.
#pragma once

#include <mutex>

#include "base/thread_annotations.h"

namespace runledger {

class RL_CAPABILITY("mutex") Mutex {
 public:
  void lock() RL_ACQUIRE() { mu_.lock(); }
  void unlock() RL_RELEASE() { mu_.unlock(); }
  bool try_lock() RL_TRY_ACQUIRE(true) { return mu_.try_lock(); }
  std::mutex& native() { return mu_; }

 private:
  std::mutex mu_;
};

// Holds `mu` for its scope (a std::lock_guard).
class RL_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) RL_ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  // Takes over `mu`, already held (after a successful try_lock()).
  MutexLock(Mutex& mu, std::adopt_lock_t) RL_REQUIRES(mu) : mu_(mu) {}
  ~MutexLock() RL_RELEASE() { mu_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

// Holds `mu` for its scope but may let it go and take it again (a
// std::unique_lock), and lends its std::unique_lock to a condition variable.
class RL_SCOPED_CAPABILITY UniqueLock {
 public:
  explicit UniqueLock(Mutex& mu) RL_ACQUIRE(mu) : lk_(mu.native()) {}
  ~UniqueLock() RL_RELEASE() = default;
  UniqueLock(const UniqueLock&) = delete;
  UniqueLock& operator=(const UniqueLock&) = delete;

  void lock() RL_ACQUIRE() { lk_.lock(); }
  void unlock() RL_RELEASE() { lk_.unlock(); }
  std::unique_lock<std::mutex>& native() { return lk_; }

 private:
  std::unique_lock<std::mutex> lk_;
};

}  // namespace runledger

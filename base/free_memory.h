// Gives the memory the allocator holds free back to the system. An allocator
// keeps what the program freed for reuse, so after a burst (big replies, the
// flushes and compactions of a long write load, a snapshot) the process
// would stay as large as at the burst's peak for as long as it runs: 10 M
// finished jobs written through the engine left 120 MB of it
// (docs/performance.md, "Memory"). Works with tcmalloc (runledgerd's
// allocator) and with the C library's malloc.
// Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>

namespace runledger {

// The heap as its allocator sees it: bytes the program holds, and bytes
// freed but still resident in the allocator's caches.
struct HeapFigures {
  uint64_t in_use_bytes = 0;
  uint64_t free_resident_bytes = 0;
};
HeapFigures heap_figures();
// Whether the process allocates through tcmalloc (the two binaries) rather
// than the C library's malloc (tests, sanitizer builds).
bool tcmalloc_linked();

// Takes tens of milliseconds for hundreds of MB: not on an event loop.
void return_free_memory_to_the_system();

// Free memory the allocator may keep for reuse between two passes of a
// FreeMemoryKeeper: enough for the churn of a busy second, so a pass under
// load gives back little that would be faulted in again at once.
inline constexpr uint64_t kFreeBytesKept = uint64_t{32} << 20;
// How often a FreeMemoryKeeper looks.
inline constexpr std::chrono::milliseconds kFreeMemoryKeeperEvery{10'000};

// Gives the free memory back when the allocator holds more than kept_bytes
// of it; true when it did.
bool return_free_memory_over(uint64_t kept_bytes);

// A thread that calls return_free_memory_over(kFreeBytesKept) every `every`
// until destroyed. runledgerd runs one, and so do the benchmarks' engines.
class FreeMemoryKeeper {
 public:
  explicit FreeMemoryKeeper(std::chrono::milliseconds every = kFreeMemoryKeeperEvery);
  ~FreeMemoryKeeper();
  FreeMemoryKeeper(const FreeMemoryKeeper&) = delete;
  FreeMemoryKeeper& operator=(const FreeMemoryKeeper&) = delete;

  // Passes that gave memory back so far.
  uint64_t releases() const;

 private:
  void run();

  const std::chrono::milliseconds every_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;  // GUARDED_BY(mu_)
  uint64_t releases_ = 0;  // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace runledger

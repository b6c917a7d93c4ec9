// wait_with_progress(): see progress_wait.h.
#include "bench/progress_wait.h"

namespace runledger::bench {

void wait_with_progress(std::vector<std::thread>& threads, const std::atomic<uint64_t>& done,
                        uint64_t total, const std::atomic<bool>& stop, const ProgressFn& progress,
                        std::string_view phase) {
  if (progress) {
    while (done.load() < total && !stop.load()) {
      progress(phase, done.load(), total);
      std::this_thread::sleep_for(kProgressInterval);
    }
  }
  for (auto& t : threads) t.join();
  if (progress) progress(phase, done.load(), total);
}

}  // namespace runledger::bench

// wait_with_progress(): joins a workload's threads while reporting how far
// they got, from the calling thread, so the progress callback never runs on
// a thread that is being measured. The threads end when `done` reaches
// `total` or when one of them sets `stop` (a failure).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string_view>
#include <thread>
#include <vector>

#include "bench/bench.h"

namespace runledger::bench {

// How often a running workload reports how far it got.
inline constexpr std::chrono::milliseconds kProgressInterval{200};

void wait_with_progress(std::vector<std::thread>& threads, const std::atomic<uint64_t>& done,
                        uint64_t total, const std::atomic<bool>& stop, const ProgressFn& progress,
                        std::string_view phase);

}  // namespace runledger::bench

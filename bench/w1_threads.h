// drive_w1_threads(): the loop both thread-per-caller W1 drivers share (the
// engine in process, w1_engine.cc; HTTP, w1_http.cc). `plan.callers` threads
// each make their caller with make_caller(index) and run jobs, taking the
// next job number until `plan.jobs` are done; the first failure stops them
// all. A caller has run_job(n, k) -> "" or what went wrong, and the members
// `latency` and `commands`.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "bench/progress_wait.h"
#include "bench/w1_engine.h"

namespace runledger::bench {

template <typename MakeCaller>
W1Outcome drive_w1_threads(const W1Plan& plan, const MakeCaller& make_caller,
                           const ProgressFn& progress, std::string_view phase) {
  W1Outcome out;
  std::atomic<uint64_t> next{0};
  std::atomic<uint64_t> succeeded{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::vector<std::thread> threads;
  // When each thread ran out of jobs: the run ends with the last of them,
  // not when the progress wait next looks.
  std::vector<std::chrono::steady_clock::time_point> ended(plan.callers);
  auto started = std::chrono::steady_clock::now();
  for (size_t c = 0; c < plan.callers; ++c) {
    threads.emplace_back([&, c] {
      auto caller = make_caller(c);
      for (uint64_t k = 0; !stop.load(std::memory_order_relaxed); ++k) {
        uint64_t n = next.fetch_add(1);
        if (n >= plan.jobs) break;
        std::string err = caller.run_job(n, k);
        if (!err.empty()) {
          stop = true;  // a broken run is not worth timing further
          std::lock_guard<std::mutex> lk(mu);
          if (out.failures.size() < kW1FailuresKeptMax) out.failures.push_back(err);
          break;
        }
        succeeded.fetch_add(1, std::memory_order_relaxed);
      }
      ended[c] = std::chrono::steady_clock::now();
      std::lock_guard<std::mutex> lk(mu);
      out.latency.merge(caller.latency);
      out.commands += caller.commands;
    });
  }
  wait_with_progress(threads, succeeded, plan.jobs, stop, progress, phase);
  out.seconds =
      std::chrono::duration<double>(*std::max_element(ended.begin(), ended.end()) - started)
          .count();
  out.jobs_succeeded = succeeded.load();
  return out;
}

}  // namespace runledger::bench

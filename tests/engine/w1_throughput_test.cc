// W1 in process: 32 threads run whole jobs (enqueue, claim, start, four steps
// started and done: 11 commands a job) against a real store for a few
// seconds. It checks that every reply was a success and the log verifies,
// and prints the figures: commands/s, p50/p99 latency, mean batch size.
// They are figures, not assertions: a shared machine's speed varies.
//
// RUNLEDGER_W1_SECONDS=<n> sets the duration (default 3).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "events/log_verifier.h"
#include "tests/engine/engine_harness.h"

namespace runledger::testing {
namespace {

constexpr int kClientThreads = 32;
constexpr double kDefaultSeconds = 3;

double percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  size_t i = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(i), v.end());
  return v[i];
}

TEST(W1InProcess, ThirtyTwoWorkersRunWholeJobsAndEveryReplySucceeds) {
  const char* env = std::getenv("RUNLEDGER_W1_SECONDS");
  const double seconds = env && *env ? std::atof(env) : kDefaultSeconds;
  EngineHarness h;
  std::mutex mu;
  std::vector<double> latencies_ms;
  std::vector<std::string> failures;
  std::atomic<bool> stop{false};

  auto started = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < kClientThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<double> mine;
      for (int n = 0; !stop.load(); ++n) {
        std::string id = fmt::format("w1-{}-{}", t, n);
        std::string err = run_w1_job(h.engine(), id, fmt::format("kind-{}", t), "target-" + id,
                                     [&](const Reply&, double ms) { mine.push_back(ms); });
        if (!err.empty()) {
          std::lock_guard<std::mutex> lk(mu);
          failures.push_back(id + ": " + err);
          break;
        }
      }
      std::lock_guard<std::mutex> lk(mu);
      latencies_ms.insert(latencies_ms.end(), mine.begin(), mine.end());
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& t : threads) t.join();
  double elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  EXPECT_TRUE(failures.empty()) << failures.size() << " jobs failed, first: " << failures[0];
  VerifyReport report;
  Status st = verify_log(h.store(), &report);
  EXPECT_TRUE(st.ok()) << st.ToString();
  size_t commands = latencies_ms.size();
  size_t appends = 0;
  for (const auto& r : h.store().records()) appends += r.events > 0;
  std::cout << fmt::format(
      "[ W1       ] {} threads, {:.1f} s: {} commands, {:.0f} commands/s, p50 {:.2f} ms, "
      "p99 {:.2f} ms, {} appends, mean batch {:.1f} commands\n",
      kClientThreads, elapsed_s, commands, static_cast<double>(commands) / elapsed_s,
      percentile(latencies_ms, 0.50), percentile(latencies_ms, 0.99), appends,
      appends ? static_cast<double>(commands) / static_cast<double>(appends) : 0.0);
  EXPECT_GT(commands, 0u);
}

}  // namespace
}  // namespace runledger::testing

// Group commit: many workers at once share appends (one fsync for many
// commands), every reply is a success, and the log that results is gapless
// with contiguous stream versions.
#include <atomic>
#include <chrono>
#include <iostream>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "events/log_verifier.h"
#include "tests/engine/engine_harness.h"

namespace runledger::testing {
namespace {

constexpr int kConcurrentWorkers = 64;
constexpr int kJobsPerWorker = 2;
// A slow disk: commands arriving while a batch is written pile up behind it.
constexpr auto kAppendDelay = std::chrono::milliseconds(1);

TEST(GroupCommit, SixtyFourConcurrentWorkersShareAppendsAndLeaveAGaplessLog) {
  // Given an engine on a disk where each append takes a while
  EngineHarness h;
  h.store().set_append_delay(kAppendDelay);
  std::mutex mu;
  std::vector<std::string> failures;
  std::multiset<uint64_t> reply_seqs;
  uint64_t events_in_replies = 0;
  int replies = 0;

  // When 64 workers each run whole jobs (enqueue, claim, start, steps) at once
  std::vector<std::thread> workers;
  for (int w = 0; w < kConcurrentWorkers; ++w) {
    workers.emplace_back([&, w] {
      for (int j = 0; j < kJobsPerWorker; ++j) {
        std::string id = "job-" + std::to_string(w) + "-" + std::to_string(j);
        std::string err = run_w1_job(h.engine(), id, "kind-" + std::to_string(w), "target-" + id,
                                     [&](const Reply& r, double) {
                                       auto body = body_json(r);
                                       std::lock_guard<std::mutex> lk(mu);
                                       ++replies;
                                       reply_seqs.insert(body.value("seq", uint64_t{0}));
                                       events_in_replies +=
                                           body.value("events", nlohmann::json::array()).size();
                                     });
        if (!err.empty()) {
          std::lock_guard<std::mutex> lk(mu);
          failures.push_back(id + ": " + err);
        }
      }
    });
  }
  for (auto& t : workers) t.join();

  // Then every reply was 2xx and every command was answered
  EXPECT_TRUE(failures.empty()) << failures.size() << " jobs failed, first: " << failures[0];
  const int commands = kConcurrentWorkers * kJobsPerWorker * kW1CommandsPerJob;
  EXPECT_EQ(replies, commands);
  // and every command produced events and got its own place in the log
  EXPECT_EQ(reply_seqs.count(0), 0u);
  EXPECT_EQ(std::set<uint64_t>(reply_seqs.begin(), reply_seqs.end()).size(), reply_seqs.size());
  // and the log holds exactly the events the replies reported, gapless, each
  // stream's versions contiguous and the hash chain whole
  VerifyReport report;
  Status st = verify_log(h.store(), &report);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(report.events, events_in_replies);
  EXPECT_EQ(report.last_seq, events_in_replies);
  EXPECT_EQ(report.streams, static_cast<uint64_t>(kConcurrentWorkers * kJobsPerWorker));
  // and commands shared appends: fewer fsyncs than commands
  size_t appends = h.store().appends();
  EXPECT_LT(appends, static_cast<size_t>(commands));
  std::cout << "[ figures  ] " << commands << " commands in " << appends << " appends (mean batch "
            << static_cast<double>(commands) / appends << ")\n";
}

TEST(GroupCommit, JobsFinishedByConcurrentWorkersAreAllStoredAsSucceeded) {
  // Given 16 workers that each finished a job at the same time
  EngineHarness h;
  h.store().set_append_delay(kAppendDelay);
  constexpr int kFew = 16;
  std::vector<std::string> errors(kFew);
  std::vector<std::thread> workers;
  for (int w = 0; w < kFew; ++w) {
    workers.emplace_back([&, w] {
      std::string id = "job-" + std::to_string(w);
      errors[w] = run_w1_job(h.engine(), id, "k" + std::to_string(w), "t-" + id, {});
    });
  }
  for (auto& t : workers) t.join();
  // Then each finished job left memory and its view says SUCCEEDED at attempt 1
  for (int w = 0; w < kFew; ++w) {
    std::string id = "job-" + std::to_string(w);
    EXPECT_EQ(errors[w], "") << id;
    std::string view;
    ASSERT_TRUE(h.store().get_view(job_stream(id), &view).ok()) << id;
    auto j = nlohmann::json::parse(view);
    EXPECT_EQ(j["state"], "SUCCEEDED") << id;
    EXPECT_EQ(j["attempt"], 1) << id;
  }
  EXPECT_EQ(inspect(h.engine(), [](const State& s) { return s.jobs.by_id.size(); }), 0u);
}

}  // namespace
}  // namespace runledger::testing

// The engine's life around its requests: shutdown answers every request in
// flight (none hangs), refuses later ones, and leaves a log and snapshot from
// which the next start has exactly the accepted work; a read-only engine
// answers reads and refuses writes without touching the log.
#include <atomic>
#include <chrono>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/engine/engine_harness.h"
#include "tests/engine/mixed_workload.h"
#include "tests/engine/state_digest.h"

namespace runledger::testing {
namespace {

constexpr int kCallersDuringShutdown = 16;
// Each thread stops here at the latest, whatever happens.
constexpr int kCommandsPerThreadMax = 2000;

TEST(Shutdown, EveryRequestInFlightIsAnsweredAndEveryAcceptedOneIsKept) {
  // Given threads enqueueing jobs as fast as they can on a slow disk
  EngineHarness h;
  h.store().set_append_delay(std::chrono::milliseconds(1));
  std::vector<std::vector<std::string>> accepted(kCallersDuringShutdown);
  std::vector<std::string> refused(kCallersDuringShutdown);
  std::atomic<int> replies{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kCallersDuringShutdown; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCommandsPerThreadMax; ++i) {
        std::string id = "j-" + std::to_string(t) + "-" + std::to_string(i);
        Reply r = run(h.engine(), enqueue_command(id, "k", "t-" + id));
        replies.fetch_add(1);
        if (r.status != 200) {
          refused[t] = id + " " + std::to_string(r.status) + " " + r.body;
          return;
        }
        accepted[t].push_back(id);
      }
    });
  }
  while (replies.load() < kCallersDuringShutdown * 4) std::this_thread::yield();
  // When the engine shuts down meanwhile
  h.engine().shutdown();
  for (auto& t : threads) t.join();  // a request left unanswered would hang here
  // Then every thread's first refusal says the engine is shutting down
  size_t total = 0;
  for (int t = 0; t < kCallersDuringShutdown; ++t) {
    total += accepted[t].size();
    if (!refused[t].empty()) {
      EXPECT_NE(refused[t].find("503"), std::string::npos) << refused[t];
      EXPECT_NE(refused[t].find("shutting down"), std::string::npos) << refused[t];
    }
  }
  // and a later request is refused at once
  EXPECT_EQ(run(h.engine(), enqueue_command("late", "k", "t")).status, 503);
  // and after a restart, from the final snapshot, exactly the accepted jobs exist
  h.reopen();
  EXPECT_EQ(h.engine().load_report().snapshot_seq, h.store().last_seq());
  EXPECT_EQ(h.engine().load_report().replayed, 0u);
  EXPECT_EQ(h.store().last_seq(), total);
  auto live = inspect(h.engine(), [](const State& s) { return s.jobs.by_id.size(); });
  EXPECT_EQ(live, total);
  for (int t = 0; t < kCallersDuringShutdown; ++t) {
    for (const auto& id : accepted[t]) {
      uint32_t version = 0;
      ASSERT_TRUE(h.store().stream_version(job_stream(id), &version).ok());
      EXPECT_EQ(version, 1u) << id;
    }
  }
}

TEST(CommandIds, EveryCommandsEventsCarryAnIdOfItsOwnOfSixteenHexDigits) {
  EngineHarness h;
  ASSERT_EQ(run_w1_job(h.engine(), "ids", "k", "t", nullptr), "");
  std::set<std::string> ids;
  const std::regex shape("c-[0-9a-f]{16}");
  Status s = h.store().read_range(0, 0, [&](const fb::Event& e, std::string_view) {
    const std::string id = e.command_id() ? e.command_id()->str() : "";
    EXPECT_TRUE(std::regex_match(id, shape)) << id;
    ids.insert(id);
    return true;
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  // One event per command in W1: as many ids as commands.
  EXPECT_EQ(ids.size(), static_cast<size_t>(kW1CommandsPerJob));
}

TEST(ReadOnly, AReadOnlyEngineAnswersReadsAndRefusesWritesWithoutTouchingTheLog) {
  // Given a log written by a workload
  EngineHarness h;
  ASSERT_EQ(run_mixed_workload(h.engine(), h.clock, "w-"), "");
  auto before = engine_digest(h.engine());
  uint64_t last_seq = h.store().last_seq();
  // When the engine starts read-only on it
  h.options.read_only = true;
  h.reopen();
  // Then it is not writable and says why
  EXPECT_FALSE(h.engine().writable());
  EXPECT_NE(h.engine().unavailable_reason(), "");
  // and reads show the state as it was
  auto now = engine_digest(h.engine());
  EXPECT_TRUE(same_state(before, now));
  // and every write, keyed or not, gets 503 and changes nothing
  EXPECT_EQ(run(h.engine(), enqueue_command("new", "k", "t")).status, 503);
  EXPECT_EQ(run(h.engine(), jobs::Cancel{"w-queued", "x"}).status, 503);
  EXPECT_EQ(
      h.engine().execute(keyed_request(jobs::Cancel{"w-queued", "x"}, "key-ro", "cancel")).status,
      503);
  h.engine().tick();
  EXPECT_EQ(h.store().last_seq(), last_seq);
  std::string record;
  EXPECT_EQ(h.store().get_idempotency("key-ro", &record).code(), Status::Code::kNotFound);
  // and its shutdown writes no snapshot
  size_t appends = h.store().appends();
  h.engine().shutdown();
  EXPECT_EQ(h.store().appends(), appends);
}

}  // namespace
}  // namespace runledger::testing

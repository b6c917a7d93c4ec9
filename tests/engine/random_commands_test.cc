// Property test: a random command sequence (RandomDriver) from a seed. After
// every command the invariants of docs/domain.md section 4 hold; every so often,
// and at the end, the engine's memory equals a fresh replay of the log; at the
// end every live entity's view equals the one a full replay shows, every
// finished one's stored view equals its replayed view, and a restart changes
// nothing.
//
// The second run does the same with a share of writes failing (503): the
// engine must rebuild from the log each time and lose or half-apply nothing.
//
// RUNLEDGER_SEED=<n> replays one seed; RUNLEDGER_COMMANDS=<n> sets the length.
#include <cstdlib>
#include <iostream>
#include <string>

#include <gtest/gtest.h>

#include "engine/entities.h"
#include "engine/state_loader.h"
#include "events/log_verifier.h"
#include "tests/engine/engine_harness.h"
#include "tests/engine/random_driver.h"
#include "tests/engine/state_digest.h"

namespace runledger::testing {
namespace {

constexpr uint64_t kDefaultSeed = 20260506;
constexpr size_t kDefaultCommands = 2000;
constexpr size_t kReplayCheckEvery = 250;
constexpr size_t kRestartAt = 1000;
constexpr uint64_t kRandomSnapshotEveryEvents = 64;
// Share of commands whose write fails in the second test.
constexpr int kFaultPercent = 3;

// Memory equals a replay of the log, from scratch and from the snapshot.
void expect_memory_is_the_log(EngineHarness& h, const std::string& when) {
  auto live = engine_digest(h.engine());
  auto full = loaded_digest(h.store(), false);
  EXPECT_TRUE(same_state(full, live)) << when;
  auto snap = loaded_digest(h.store(), true);
  EXPECT_TRUE(same_state(snap, live)) << when << ", from the snapshot";
}

// Every live view equals the replayed one; every entity the replay shows
// finished has its view stored, equal to the replayed one.
void expect_views_match_a_full_replay(EngineHarness& h) {
  State fresh = loaded_state(h.store(), false, false);
  auto replayed = live_views(fresh);
  auto live = inspect(h.engine(), [](const State& s) { return live_views(s); });
  for (const auto& [stream, view] : live.items()) {
    ASSERT_TRUE(replayed.contains(stream)) << stream << " is live but not in the replay";
    EXPECT_EQ(view, replayed[stream])
        << stream << ": " << describe_difference(replayed[stream], view);
  }
  for (const auto& [stream, view] : replayed.items()) {
    if (live.contains(stream)) continue;
    EXPECT_TRUE(is_finished(fresh, stream)) << stream << " is unfinished but not in memory";
    std::string stored;
    ASSERT_TRUE(h.store().get_view(stream, &stored).ok()) << stream << " has no stored view";
    auto s = nlohmann::json::parse(stored);
    EXPECT_TRUE(same_state(view, s)) << stream << ", stored view";
  }
}

// A restart halfway: everything but the connectors' schedules (which the
// gap records of a start may move on) is as it was.
void restart_midway(EngineHarness& h) {
  auto before = engine_digest(h.engine());
  h.reopen();
  h.engine().record_schedule_gaps();
  auto after = engine_digest(h.engine());
  for (auto key : {"connectors", "connector_indexes", "last_seq", "last_hash"}) {
    before.erase(key);
    after.erase(key);
  }
  ASSERT_TRUE(same_state(before, after)) << "across the restart";
}

void run_random_commands(uint64_t seed, int fault_percent) {
  const size_t commands = env_number("RUNLEDGER_COMMANDS", kDefaultCommands);
  SCOPED_TRACE("seed " + std::to_string(seed) +
               " (rerun with RUNLEDGER_SEED=" + std::to_string(seed) + ")");
  std::cout << "[ seed     ] " << seed << ", " << commands << " commands\n";
  EngineOptions o = test_engine_options();
  o.snapshot_every_events = kRandomSnapshotEveryEvents;
  EngineHarness h(o);
  RandomDriver driver(h, seed, fault_percent);

  for (size_t i = 1; i <= commands; ++i) {
    std::string err = driver.step();
    ASSERT_EQ(err, "") << "command " << i;
    if (i % kReplayCheckEvery == 0) {
      expect_memory_is_the_log(h, "after command " + std::to_string(i));
      if (::testing::Test::HasFailure()) FAIL() << "stopped at command " << i;
    }
    if (i == kRestartAt) {
      ASSERT_NO_FATAL_FAILURE(restart_midway(h));
    }
  }
  VerifyReport report;
  Status st = verify_log(h.store(), &report);
  ASSERT_TRUE(st.ok()) << st.ToString();
  expect_memory_is_the_log(h, "at the end");
  expect_views_match_a_full_replay(h);
  auto before = engine_digest(h.engine());
  h.reopen();
  auto after = engine_digest(h.engine());
  EXPECT_TRUE(same_state(before, after)) << "across the restart";
  std::cout << "[ figures  ] " << driver.commands_run() << " commands, " << report.events
            << " events, " << report.streams << " streams; replies:" << driver.coverage() << "\n";
}

TEST(RandomCommands, InvariantsHoldAfterEveryCommandAndMemoryEqualsTheLog) {
  run_random_commands(env_number("RUNLEDGER_SEED", kDefaultSeed), 0);
}

TEST(RandomCommands, WithFailedWritesMemoryStillEqualsTheLog) {
  run_random_commands(env_number("RUNLEDGER_SEED", kDefaultSeed + 1), kFaultPercent);
}

}  // namespace
}  // namespace runledger::testing

// The connector schedule (docs/domain.md 2.4, 2.5): the first slot, what a due
// slot does in every state, the stale lock at exactly stale_lock_s, no
// duplicate run, gaps instead of catch-up, and the start-up gap record.
#include <gtest/gtest.h>

#include "base/time_text.h"
#include "tests/projections/connector_testing.h"

namespace runledger::connectors {
namespace {

using testing::accept;
using testing::begin_deletion;
using testing::conn;
using testing::create;
using testing::create_in_error;
using testing::event_data;
using testing::expect_refused_saying;
using testing::Given;
using testing::kMsPerS;
using testing::set_status;
using testing::start;

constexpr int64_t kIntervalS = 60;
constexpr int64_t kIntervalMs = kIntervalS * kMsPerS;

// A connector created with a 60 s schedule; returns its first slot.
int64_t scheduled(Given& g, const std::string& id = "c1") {
  create(g, id, kIntervalS);
  return conn(g, id).next_slot_ms;
}

Decision run_at(Given& g, int64_t now_ms) {
  g.now_ms = now_ms;
  return g.run(RunSchedule{});
}

TEST(ConnectorSchedule, FirstSlotIsOneIntervalAfterTheScheduleWasSet) {
  Given g;
  int64_t created_at = g.now_ms;
  EXPECT_EQ(scheduled(g), created_at + kIntervalMs);
  EXPECT_EQ(next_due_ms(g.state), created_at + kIntervalMs);

  g.now_ms += 7 * kMsPerS;
  Update u;
  u.id = "c1";
  u.sync_schedule_s = 300;
  Decision d = accept(g, u);
  EXPECT_EQ(Given::types(d), std::vector<std::string>{"ConnectorUpdated"});
  EXPECT_EQ(conn(g).next_slot_ms, g.now_ms + 300 * kMsPerS);

  u.sync_schedule_s = 0;
  accept(g, u);
  EXPECT_EQ(conn(g).next_slot_ms, 0);
  EXPECT_EQ(next_due_ms(g.state), 0);
  EXPECT_TRUE(view(conn(g))["sync_schedule_s"].is_null());
}

TEST(ConnectorSchedule, SettingTheSameIntervalAgainDoesNotMoveTheSlot) {
  Given g;
  int64_t slot = scheduled(g);
  g.now_ms += 30 * kMsPerS;
  Update u;
  u.id = "c1";
  u.sync_schedule_s = kIntervalS;
  EXPECT_TRUE(accept(g, u).events.empty());
  EXPECT_EQ(conn(g).next_slot_ms, slot);
}

TEST(ConnectorSchedule, NextDueIsTheEarliestSlotOfAllConnectors) {
  Given g;
  create(g, "late", 600);
  int64_t early = scheduled(g, "early");
  create(g, "never");
  EXPECT_EQ(next_due_ms(g.state), early);
}

TEST(ConnectorSchedule, NothingHappensBeforeTheSlot) {
  Given g;
  int64_t slot = scheduled(g);
  EXPECT_TRUE(run_at(g, slot - 1).events.empty());
  EXPECT_EQ(conn(g).sync_status, SyncStatus::kIdle);
}

TEST(ConnectorSchedule, ADueSlotStartsAScheduledSyncAndMovesOneInterval) {
  Given g;
  int64_t slot = scheduled(g);
  Decision d = run_at(g, slot);
  ASSERT_EQ(Given::types(d), std::vector<std::string>{"SyncStarted"});
  nlohmann::json data = event_data(g, d, 0);
  EXPECT_EQ(data["trigger"], "schedule");
  EXPECT_EQ(data["slot_at"], format_time_ms(slot));
  EXPECT_EQ(data["sync_id"], "sync-1");
  EXPECT_EQ(conn(g).sync_id, "sync-1");
  EXPECT_EQ(conn(g).next_slot_ms, slot + kIntervalMs);
  EXPECT_EQ(view(conn(g))["sync"]["trigger"], "schedule");
}

TEST(ConnectorSchedule, RunningTheScheduleTwiceAtOneInstantStartsOneSync) {
  Given g;
  int64_t slot = scheduled(g);
  run_at(g, slot + 10);
  EXPECT_TRUE(run_at(g, slot + 10).events.empty());
  EXPECT_EQ(conn(g).sync_id, "sync-1");
}

TEST(ConnectorSchedule, ErrorDoesNotStopTheSchedule) {
  Given g;
  create_in_error(g);
  Update u;
  u.id = "c1";
  u.sync_schedule_s = kIntervalS;
  accept(g, u);
  Decision d = run_at(g, conn(g).next_slot_ms);
  EXPECT_EQ(Given::types(d), std::vector<std::string>{"SyncStarted"});
  EXPECT_EQ(conn(g).status, Status::kError);
}

TEST(ConnectorSchedule, PausedAndDeletingAreSkippedWithTheirReason) {
  Given g;
  int64_t slot = scheduled(g, "p");
  set_status(g, "paused", "p");
  scheduled(g, "d");
  begin_deletion(g, "d");
  Decision d = run_at(g, slot);
  ASSERT_EQ(Given::types(d), (std::vector<std::string>{"SyncSkipped", "SyncSkipped"}));
  std::map<std::string, std::string> reasons;
  for (size_t i = 0; i < d.events.size(); ++i) {
    reasons[d.events[i].stream] = event_data(g, d, i)["reason"];
  }
  EXPECT_EQ(reasons["connector/p"], "paused");
  EXPECT_EQ(reasons["connector/d"], "deleting");
  EXPECT_EQ(conn(g, "p").sync_status, SyncStatus::kIdle);
  EXPECT_EQ(conn(g, "p").next_slot_ms, slot + kIntervalMs);
}

TEST(ConnectorSchedule, ARunningSyncYoungerThanTheStaleLockIsNotDuplicated) {
  Given g;
  int64_t slot = scheduled(g);
  start(g, "s1");
  Decision d = run_at(g, slot);
  ASSERT_EQ(Given::types(d), std::vector<std::string>{"SyncSkipped"});
  nlohmann::json data = event_data(g, d, 0);
  EXPECT_EQ(data["reason"], "sync_running");
  EXPECT_EQ(data["running_sync_id"], "s1");
  EXPECT_EQ(conn(g).sync_id, "s1");
}

TEST(ConnectorSchedule, OneMillisecondShortOfTheStaleLockIsStillSkipped) {
  Given g;
  g.policy.stale_lock_s = 2 * kIntervalS;
  int64_t slot = scheduled(g);
  g.now_ms += 1;
  start(g, "s1");
  run_at(g, slot);
  Decision d = run_at(g, slot + kIntervalMs);  // the lock is 119.999 s old
  ASSERT_EQ(Given::types(d), std::vector<std::string>{"SyncSkipped"});
  EXPECT_EQ(conn(g).sync_id, "s1");
}

TEST(ConnectorSchedule, ALockExactlyStaleLockSOldIsBrokenAndTheOldSyncSuperseded) {
  Given g;
  g.policy.stale_lock_s = 2 * kIntervalS;
  int64_t started_at = g.now_ms;
  int64_t slot = scheduled(g);
  start(g, "s1");
  run_at(g, slot);  // 60 s old: skipped
  Decision d = run_at(g, slot + kIntervalMs);
  ASSERT_EQ(Given::types(d), (std::vector<std::string>{"SyncLockBroken", "SyncStarted"}));
  nlohmann::json broken = event_data(g, d, 0);
  EXPECT_EQ(broken["sync_id"], "s1");
  EXPECT_EQ(broken["age_s"], 2 * kIntervalS);
  EXPECT_EQ(broken["started_at"], format_time_ms(started_at));
  EXPECT_EQ(event_data(g, d, 1)["trigger"], "stale_lock");
  EXPECT_EQ(conn(g).sync_trigger, "stale_lock");
  EXPECT_NE(conn(g).sync_id, "s1");
  EXPECT_EQ(conn(g).sync_started_at_ms, g.now_ms);
  expect_refused_saying(g.run(ReportSucceeded{"c1", "s1", {}}), 409, "stale_sync",
                        "Sync s1 is not the current sync (superseded)");
}

TEST(ConnectorSchedule, FallingBehindRecordsOneGapAndServesOnlyTheLatestSlot) {
  Given g;
  int64_t slot = scheduled(g);
  Decision d = run_at(g, slot + 3 * kIntervalMs + kIntervalMs / 2);
  ASSERT_EQ(Given::types(d), (std::vector<std::string>{"ScheduleGap", "SyncStarted"}));
  nlohmann::json gap = event_data(g, d, 0);
  EXPECT_EQ(gap["slots_missed"], 3);
  EXPECT_EQ(gap["from"], format_time_ms(slot));
  EXPECT_EQ(gap["to"], format_time_ms(slot + 2 * kIntervalMs));
  EXPECT_EQ(event_data(g, d, 1)["slot_at"], format_time_ms(slot + 3 * kIntervalMs));
  EXPECT_EQ(conn(g).next_slot_ms, slot + 4 * kIntervalMs);
  EXPECT_GT(conn(g).next_slot_ms, g.now_ms);
}

TEST(ConnectorScheduleGaps, StartUpRecordsMissedSlotsOnceAndRunsNone) {
  Given g;
  int64_t slot = scheduled(g, "missed");
  create(g, "later", 3600);
  g.now_ms = slot + 4 * kIntervalMs + 5;  // slots 0..4 passed while down
  Decision d = g.run(RecordScheduleGaps{});
  ASSERT_EQ(Given::types(d), std::vector<std::string>{"ScheduleGap"});
  EXPECT_EQ(d.events[0].stream, "connector/missed");
  nlohmann::json gap = event_data(g, d, 0);
  EXPECT_EQ(gap["slots_missed"], 5);
  EXPECT_EQ(gap["from"], format_time_ms(slot));
  EXPECT_EQ(gap["to"], format_time_ms(slot + 4 * kIntervalMs));
  EXPECT_EQ(conn(g, "missed").next_slot_ms, slot + 5 * kIntervalMs);
  EXPECT_EQ(conn(g, "missed").sync_status, SyncStatus::kIdle);
  EXPECT_TRUE(g.run(RecordScheduleGaps{}).events.empty());
  EXPECT_TRUE(g.run(RunSchedule{}).events.empty());
}

TEST(ConnectorScheduleGaps, ASlotDueAtTheVeryInstantCountsAsMissed) {
  Given g;
  int64_t slot = scheduled(g);
  g.now_ms = slot;
  Decision d = g.run(RecordScheduleGaps{});
  ASSERT_EQ(Given::types(d), std::vector<std::string>{"ScheduleGap"});
  EXPECT_EQ(event_data(g, d, 0)["slots_missed"], 1);
  EXPECT_EQ(conn(g).next_slot_ms, slot + kIntervalMs);
}

}  // namespace
}  // namespace runledger::connectors

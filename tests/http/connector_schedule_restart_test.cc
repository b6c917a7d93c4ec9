// The schedule and the stale lock across a restart (docs/domain.md 2.4, 2.5) on a
// real server killed with SIGKILL: slots missed while it was down are not
// caught up but recorded as one ScheduleGap, the schedule goes on after the
// restart, and a sync left running by the crash is superseded by the
// schedule once it is older than --stale-lock-s.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/http/server_fixture.h"

namespace runledger::testing {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

// Long enough for a loaded machine to run a 1 s schedule several times.
constexpr auto kEventWait = seconds(30);
// Down long enough that at least two 1 s slots fall due while it is down.
constexpr auto kDownTime = milliseconds(3500);

class ConnectorScheduleRestartTest : public ServerTest {
 protected:
  std::vector<std::string> initial_flags() const override { return {"--stale-lock-s", "2"}; }

  std::vector<json> events() {
    ApiReply r = client().get("/v1/connectors/c1/events");
    EXPECT_EQ(r.status, 200) << r.body;
    std::vector<json> out;
    if (r.status == 200) {
      for (const auto& e : r.json.at("events")) out.push_back(e);
    }
    return out;
  }

  // Waits until the connector's stream has an event of `type` after `after_seq`
  // for which `match` holds; that event, or null when kEventWait passes.
  template <typename Match>
  json wait_for(const std::string& type, uint64_t after_seq, Match match) {
    const auto deadline = std::chrono::steady_clock::now() + kEventWait;
    while (std::chrono::steady_clock::now() < deadline) {
      for (const auto& e : events()) {
        if (e.value("seq", uint64_t{0}) > after_seq && e.value("type", "") == type && match(e)) {
          return e;
        }
      }
      std::this_thread::sleep_for(milliseconds(100));
    }
    return json();
  }

  static bool any(const json&) { return true; }
  static bool scheduled(const json& e) { return e.at("data").value("trigger", "") == "schedule"; }
  uint64_t last_seq() {
    auto all = events();
    return all.empty() ? 0 : all.back().value("seq", uint64_t{0});
  }
};

TEST_F(ConnectorScheduleRestartTest, MissedSlotsAreOneGapEventAndTheScheduleGoesOn) {
  // Given a connector on a 1 s schedule whose first scheduled sync has started
  ASSERT_TRUE(IsStatus(
      client().post("/v1/connectors", {{"id", "c1"}, {"name", "n"}, {"sync_schedule_s", 1}}), 201));
  json first = wait_for("SyncStarted", 0, scheduled);
  ASSERT_FALSE(first.is_null());
  // and has finished, so the next slots would start syncs
  const std::string sync_id = first.at("data").value("sync_id", "");
  ASSERT_TRUE(IsStatus(
      client().post("/v1/connectors/c1/syncs/" + sync_id + "/succeeded", json::object()), 200));
  // When the server is killed and stays down for several slots
  server().kill_hard();
  std::this_thread::sleep_for(kDownTime);
  ASSERT_NO_FATAL_FAILURE(start(initial_flags()));
  // Then exactly one gap event records the missed slots
  json gap = wait_for("ScheduleGap", 0, any);
  ASSERT_FALSE(gap.is_null()) << "no ScheduleGap after the restart";
  EXPECT_GE(gap.at("data").value("slots_missed", 0), 2);
  int gaps = 0;
  for (const auto& e : events()) gaps += e.value("type", "") == "ScheduleGap";
  EXPECT_EQ(gaps, 1);
  // and the schedule goes on after it
  const uint64_t gap_seq = gap.value("seq", uint64_t{0});
  json next = wait_for("SyncStarted", gap_seq, scheduled);
  EXPECT_FALSE(next.is_null()) << "the schedule did not resume after the restart";
  // and the missed slots were not caught up: no slot was served twice
  std::vector<std::string> slots;  // RFC 3339 in ms: their order is the time order
  for (const auto& e : events()) {
    if (e.value("seq", uint64_t{0}) <= gap_seq) continue;
    const json& d = e.at("data");
    if (d.contains("slot_at")) slots.push_back(d.value("slot_at", ""));
  }
  for (size_t i = 1; i < slots.size(); ++i) EXPECT_LT(slots[i - 1], slots[i]);
}

TEST_F(ConnectorScheduleRestartTest, ASyncLeftRunningByACrashIsSupersededAfterTheStaleLockAge) {
  // Given a scheduled sync that is running when the server is killed
  ASSERT_TRUE(IsStatus(
      client().post("/v1/connectors", {{"id", "c1"}, {"name", "n"}, {"sync_schedule_s", 1}}), 201));
  json first = wait_for("SyncStarted", 0, scheduled);
  ASSERT_FALSE(first.is_null());
  const std::string old_sync = first.at("data").value("sync_id", "");
  server().kill_hard();
  // When it restarts, the sync is still running with nobody behind it
  ASSERT_NO_FATAL_FAILURE(start(initial_flags()));
  EXPECT_EQ(client().get("/v1/connectors/c1").json.value("sync_status", ""), "running");
  // Then once it is older than --stale-lock-s (2 s) a slot breaks the lock
  json broken = wait_for("SyncLockBroken", 0, any);
  ASSERT_FALSE(broken.is_null()) << "the stale lock was never broken";
  EXPECT_EQ(broken.at("data").value("sync_id", ""), old_sync);
  json replacement = wait_for("SyncStarted", broken.value("seq", uint64_t{0}), [](const json& e) {
    return e.at("data").value("trigger", "") == "stale_lock";
  });
  ASSERT_FALSE(replacement.is_null());
  EXPECT_NE(replacement.at("data").value("sync_id", ""), old_sync);
  // and a report of the superseded sync is refused, recorded as ignored
  EXPECT_EQ(
      client().post("/v1/connectors/c1/syncs/" + old_sync + "/succeeded", json::object()).status,
      409);
  EXPECT_FALSE(wait_for("SyncReportIgnored", 0, any).is_null());
}

}  // namespace
}  // namespace runledger::testing

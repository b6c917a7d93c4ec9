// The connector's JSON: the HTTP view exactly as docs/api.md lists it, the
// document list, the lossless snapshot form, and the state a replay of the
// log rebuilds compared with the live one.
#include <gtest/gtest.h>

#include <set>

#include "base/time_text.h"
#include "events/event_codec.h"
#include "projections/snapshot.h"
#include "tests/projections/connector_testing.h"

namespace runledger::connectors {
namespace {

using testing::accept;
using testing::conn;
using testing::create;
using testing::create_in_error;
using testing::Given;
using testing::kMsPerS;
using testing::set_status;
using testing::start;

std::set<std::string> keys(const nlohmann::json& j) {
  std::set<std::string> out;
  for (const auto& [k, v] : j.items()) out.insert(k);
  return out;
}

// A connector that has been through most of its life: schedule, a failed
// and an aborted sync, documents in every status, a sync running now.
void busy_history(Given& g) {
  create(g, "c1", 60);
  create_in_error(g, "c2");
  start(g, "s1");
  DocumentReport r;
  r.pending = {"d3", "d4"};
  r.running = {"d2"};
  r.indexed = {"d1"};
  r.failed = {{"d5", "bad encoding"}};
  accept(g, ReportProgress{"c1", "s1", r});
  accept(g, AbortSync{"c1"});
  g.now_ms += 61 * kMsPerS;
  accept(g, RunSchedule{});
  accept(g, ReportProgress{"c1", "sync-1", testing::pending({"d6"})});
  g.run(ReportFailed{"c1", "s1", "late"});  // ignored: on record only
  set_status(g, "paused", "c2");
}

TEST(ConnectorView, HasExactlyTheContractKeysWithNullsForUnsetValues) {
  Given g;
  create(g);
  nlohmann::json v = view(conn(g));
  EXPECT_EQ(keys(v), (std::set<std::string>{"id", "name", "status", "sync_status", "last_error",
                                            "last_synced_at", "sync_schedule_s", "sync",
                                            "documents", "created_at", "updated_at", "version"}));
  EXPECT_EQ(v["id"], "c1");
  EXPECT_EQ(v["status"], "active");
  EXPECT_EQ(v["sync_status"], "idle");
  EXPECT_TRUE(v["last_error"].is_null());
  EXPECT_TRUE(v["last_synced_at"].is_null());
  EXPECT_TRUE(v["sync_schedule_s"].is_null());
  EXPECT_TRUE(v["sync"].is_null());
  EXPECT_EQ(v["documents"],
            (nlohmann::json{{"pending", 0}, {"running", 0}, {"indexed", 0}, {"failed", 0}}));
  EXPECT_EQ(v["created_at"], format_time_ms(g.now_ms));
  EXPECT_EQ(v["version"], 1);
}

TEST(ConnectorView, ShowsTheRunningSyncAndTheLastSuccessAsRfc3339) {
  Given g;
  create(g, "c1", 60);
  int64_t started_at = g.now_ms;
  start(g, "s1");
  nlohmann::json v = view(conn(g));
  EXPECT_EQ(v["sync"], (nlohmann::json{{"sync_id", "s1"},
                                       {"trigger", "manual"},
                                       {"started_at", format_time_ms(started_at)}}));
  EXPECT_EQ(v["sync_schedule_s"], 60);
  g.now_ms += 1234;
  accept(g, ReportSucceeded{"c1", "s1", {}});
  v = view(conn(g));
  EXPECT_TRUE(v["sync"].is_null());
  EXPECT_EQ(v["last_synced_at"], format_time_ms(g.now_ms));
  EXPECT_EQ(v["updated_at"], format_time_ms(g.now_ms));
  EXPECT_EQ(v["version"], 3);
}

TEST(ConnectorDocumentsView, ListsSortedByIdWithErrorsOnlyOnFailedAndFilters) {
  Given g;
  busy_history(g);
  nlohmann::json all = documents_view(conn(g), std::nullopt)["documents"];
  std::vector<std::string> ids;
  for (const auto& d : all) ids.push_back(d["id"]);
  EXPECT_EQ(ids, (std::vector<std::string>{"d1", "d2", "d3", "d4", "d5", "d6"}));
  EXPECT_EQ(all[0], (nlohmann::json{{"id", "d1"}, {"status", "indexed"}}));
  EXPECT_EQ(all[4],
            (nlohmann::json{{"id", "d5"}, {"status", "failed"}, {"error", "bad encoding"}}));
  nlohmann::json failed = documents_view(conn(g), DocStatus::kFailed)["documents"];
  ASSERT_EQ(failed.size(), 4u);  // d5, and the three the abort failed
  EXPECT_EQ(failed[0],
            (nlohmann::json{{"id", "d2"}, {"status", "failed"}, {"error", "sync aborted"}}));
  EXPECT_EQ(documents_view(conn(g), DocStatus::kPending)["documents"],
            (nlohmann::json::parse(R"([{"id":"d6","status":"pending"}])")));
}

TEST(ConnectorSnapshot, TheStateSnapshotRestoresEveryConnectorAndItsSlot) {
  Given g;
  busy_history(g);
  ASSERT_FALSE(g.state.connectors.by_id.empty());
  State restored;
  runledger::Status st = decode_snapshot(encode_snapshot(g.state), &restored);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(restored.connectors.by_id, g.state.connectors.by_id);
  EXPECT_EQ(restored.connectors.slots, g.state.connectors.slots);
  for (const auto& [id, c] : g.state.connectors.by_id) {
    EXPECT_EQ(view(restored.connectors.by_id.at(id)), view(c)) << id;
  }
}

TEST(ConnectorSnapshot, AdoptRebuildsTheSlotIndexAndEvictRemovesIt) {
  Given g;
  busy_history(g);
  State restored;
  for (const auto& [id, c] : g.state.connectors.by_id) adopt(restored, c);
  EXPECT_EQ(restored.connectors.by_id, g.state.connectors.by_id);
  EXPECT_EQ(restored.connectors.slots, g.state.connectors.slots);
  EXPECT_EQ(next_due_ms(restored), conn(g).next_slot_ms);
  evict(restored, "c1");
  EXPECT_TRUE(restored.connectors.slots.empty());
  EXPECT_EQ(restored.connectors.by_id.count("c1"), 0u);
}

TEST(ConnectorReplay, FoldingTheEncodedLogRebuildsTheLiveState) {
  Given g;
  busy_history(g);
  create(g, "gone");
  accept(g, Delete{"gone"});
  State rebuilt = testing::replay(g.log());
  EXPECT_EQ(rebuilt.connectors.by_id, g.state.connectors.by_id);
  EXPECT_EQ(rebuilt.connectors.slots, g.state.connectors.slots);
  EXPECT_EQ(rebuilt.last_seq, g.state.last_seq);
  EXPECT_EQ(rebuilt.connectors.by_id.count("gone"), 0u);
}

TEST(ConnectorLifecycle, ALiveConnectorIsNeverFinished) {
  Given g;
  busy_history(g);
  for (const auto& [id, c] : g.state.connectors.by_id) EXPECT_FALSE(finished(c)) << id;
}

}  // namespace
}  // namespace runledger::connectors

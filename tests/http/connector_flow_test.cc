// Connectors end to end on a real server, as the tables of seed 000 (docs/domain.md
// 2): manual sync and abort; sync failure vs abort; reports fenced by
// sync_id and recorded as ignored; delete; a 1 MB last_error stored cut to
// 500 characters; a sync left running by a restart.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/http/server_fixture.h"

namespace runledger::testing {
namespace {

using nlohmann::json;

constexpr size_t kLastErrorCharsMax = 500;
constexpr size_t kLastErrorSentBytes = 1'000'000;  // "a last_error of 1 MB"

class ConnectorFlowTest : public ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    if (HasFatalFailure()) return;
    ApiReply created = client().post("/v1/connectors", {{"id", "c1"}, {"name", "Shop A"}});
    ASSERT_TRUE(IsStatus(created, 201));
    ASSERT_EQ(created.json.value("status", ""), "active");
    ASSERT_EQ(created.json.value("sync_status", ""), "idle");
  }

  // Starts a manual sync; its sync_id.
  std::string sync() {
    ApiReply r = client().post("/v1/connectors/c1/sync", json::object());
    EXPECT_TRUE(IsStatus(r, 202));
    return r.json.value("sync_id", "");
  }
  ApiReply report(const std::string& sync_id, const std::string& what, const json& body) {
    return client().post("/v1/connectors/c1/syncs/" + sync_id + "/" + what, body);
  }
  json connector() { return client().get("/v1/connectors/c1").json; }
  json last_event() {
    ApiReply r = client().get("/v1/connectors/c1/events");
    return r.status == 200 && !r.json.at("events").empty() ? r.json.at("events").back() : json();
  }
};

TEST_F(ConnectorFlowTest, ManualSyncAndAbort) {
  ApiReply started = client().post("/v1/connectors/c1/sync", json::object());
  ASSERT_TRUE(IsStatus(started, 202));
  const std::string sync_id = started.json.value("sync_id", "");
  EXPECT_FALSE(sync_id.empty());
  const json& conn = started.json.at("connector");
  EXPECT_EQ(conn.value("sync_status", ""), "running");
  EXPECT_EQ(conn.at("sync").value("sync_id", ""), sync_id);
  EXPECT_EQ(conn.at("sync").value("trigger", ""), "manual");

  EXPECT_EQ(client().post("/v1/connectors/c1/sync", json::object()).json.value("error", ""),
            "Sync already in progress");
  EXPECT_EQ(client().del("/v1/connectors/c1").json.value("error", ""),
            "Cannot delete connector while sync is running");

  ApiReply aborted = client().post("/v1/connectors/c1/sync/abort", json::object());
  ASSERT_TRUE(IsStatus(aborted, 202));
  EXPECT_EQ(aborted.json.value("sync_status", ""), "idle");  // at once, no waiting
  EXPECT_EQ(aborted.json.value("status", ""), "active");
  EXPECT_TRUE(aborted.json.at("sync").is_null()) << aborted.body;
  EXPECT_EQ(client().post("/v1/connectors/c1/sync/abort", json::object()).json.value("error", ""),
            "No sync in progress");

  ASSERT_TRUE(IsStatus(client().patch("/v1/connectors/c1", {{"status", "paused"}}), 200));
  EXPECT_EQ(client().post("/v1/connectors/c1/sync", json::object()).json.value("error", ""),
            "Connector is paused");
  ASSERT_TRUE(IsStatus(client().patch("/v1/connectors/c1", {{"status", "active"}}), 200));
  EXPECT_FALSE(sync().empty());
  EXPECT_EQ(connector().value("sync_status", ""), "running");
}

TEST_F(ConnectorFlowTest, SyncFailureSetsErrorAndAnAbortLeavesTheStatusAsItWas) {
  const std::string first = sync();
  ApiReply failed = report(first, "failed", {{"error", "crawl loop raised TimeoutError"}});
  ASSERT_TRUE(IsStatus(failed, 200));
  EXPECT_EQ(failed.json.value("status", ""), "error");
  EXPECT_EQ(failed.json.value("sync_status", ""), "idle");
  EXPECT_EQ(failed.json.value("last_error", ""), "crawl loop raised TimeoutError");

  // An earlier failure never blocks the next attempt.
  const std::string second = sync();
  ASSERT_FALSE(second.empty());
  ApiReply aborted = client().post("/v1/connectors/c1/sync/abort", json::object());
  ASSERT_TRUE(IsStatus(aborted, 202));
  EXPECT_EQ(aborted.json.value("status", ""), "error");  // an abort is not a success
  EXPECT_EQ(aborted.json.value("sync_status", ""), "idle");
  EXPECT_EQ(aborted.json.value("last_error", ""), "crawl loop raised TimeoutError");

  // The aborted loop's exception arrives late: only logged, status unchanged.
  const size_t before = client().event_count();
  ApiReply late = report(second, "failed", {{"error", "interrupted"}});
  EXPECT_TRUE(IsError(late, 409, "stale_sync"));
  EXPECT_EQ(connector().value("last_error", ""), "crawl loop raised TimeoutError");
  EXPECT_EQ(client().event_count(), before + 1);
  EXPECT_EQ(last_event().value("type", ""), "SyncReportIgnored");

  // Only a sync that completes brings the connector back to active.
  const std::string third = sync();
  ApiReply ok = report(third, "succeeded", json::object());
  ASSERT_TRUE(IsStatus(ok, 200));
  EXPECT_EQ(ok.json.value("status", ""), "active");
  EXPECT_EQ(ok.json.value("sync_status", ""), "idle");
  EXPECT_TRUE(ok.json.at("last_error").is_null()) << ok.body;
  EXPECT_FALSE(ok.json.at("last_synced_at").is_null()) << ok.body;
}

TEST_F(ConnectorFlowTest, AbortFailsOpenDocumentsAndTellsTheLoopToStop) {
  const std::string sync_id = sync();
  ApiReply progress = report(
      sync_id, "progress",
      {{"documents", {{"pending", {"d1", "d2"}}, {"running", {"d3"}}, {"indexed", {"d0"}}}}});
  ASSERT_TRUE(IsStatus(progress, 200));
  EXPECT_EQ(progress.json, json({{"continue", true}}));
  EXPECT_EQ(connector().at("documents"),
            json({{"pending", 2}, {"running", 1}, {"indexed", 1}, {"failed", 0}}));

  ASSERT_TRUE(IsStatus(client().post("/v1/connectors/c1/sync/abort", json::object()), 202));
  const json after_abort = connector();
  EXPECT_EQ(after_abort.at("documents"),
            json({{"pending", 0}, {"running", 0}, {"indexed", 1}, {"failed", 3}}));
  ApiReply failed_docs = client().get("/v1/connectors/c1/documents?status=failed");
  ASSERT_TRUE(IsStatus(failed_docs, 200));
  std::vector<std::string> ids;
  for (const auto& d : failed_docs.json.at("documents")) ids.push_back(d.value("id", ""));
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<std::string>{"d1", "d2", "d3"}));

  const size_t before = client().event_count();
  ApiReply stop = report(sync_id, "progress", {{"documents", {{"indexed", {"d1"}}}}});
  EXPECT_TRUE(IsError(stop, 409, "stale_sync"));
  EXPECT_EQ(stop.json.value("continue", true), false) << stop.body;
  EXPECT_EQ(client().event_count(), before + 1);
  const json ignored = last_event();
  EXPECT_EQ(ignored.value("type", ""), "SyncReportIgnored");
  EXPECT_EQ(ignored.value("data", json()).value("sync_id", ""), sync_id) << ignored.dump();
  const json now = connector();
  EXPECT_EQ(now.at("documents"), after_abort.at("documents"));
  EXPECT_EQ(now.value("sync_status", ""), "idle");
  EXPECT_EQ(now.value("status", ""), "active");
}

TEST_F(ConnectorFlowTest, ReportsOfASupersededSyncAreFencedBySyncId) {
  const std::string old_sync = sync();
  ASSERT_TRUE(IsStatus(client().post("/v1/connectors/c1/sync/abort", json::object()), 202));
  const std::string current = sync();
  ASSERT_NE(old_sync, current);

  EXPECT_TRUE(IsError(report(old_sync, "succeeded", json::object()), 409, "stale_sync"));
  EXPECT_TRUE(IsError(report("sync-never-started", "failed", {{"error", "x"}}), 409, "stale_sync"));

  json conn = connector();
  EXPECT_EQ(conn.value("sync_status", ""), "running");
  EXPECT_EQ(conn.at("sync").value("sync_id", ""), current);
  EXPECT_EQ(conn.value("status", ""), "active");
  EXPECT_EQ(report(current, "progress", json::object()).json, json({{"continue", true}}));
}

TEST_F(ConnectorFlowTest, DeleteIs202ThenNotFoundWhileItsEventsStayReadable) {
  const std::string sync_id = sync();
  ASSERT_TRUE(
      IsStatus(report(sync_id, "succeeded", {{"documents", {{"indexed", {"d1", "d2"}}}}}), 200));

  ApiReply deleted = client().del("/v1/connectors/c1");
  ASSERT_TRUE(IsStatus(deleted, 202));
  EXPECT_EQ(deleted.json.value("status", ""), "deleting");

  EXPECT_TRUE(IsError(client().get("/v1/connectors/c1"), 404, "not_found"));
  EXPECT_TRUE(IsError(client().get("/v1/connectors/c1/documents"), 404, "not_found"));
  EXPECT_TRUE(client().get("/v1/connectors").json.at("connectors").empty());
  ApiReply events = client().get("/v1/connectors/c1/events");
  ASSERT_TRUE(IsStatus(events, 200));
  std::vector<std::string> types;
  for (const auto& e : events.json.at("events")) types.push_back(e.value("type", ""));
  EXPECT_EQ(types, (std::vector<std::string>{"ConnectorCreated", "SyncStarted", "SyncSucceeded",
                                             "ConnectorDeletionStarted", "ConnectorDeleted"}));
}

TEST_F(ConnectorFlowTest, LastErrorOfOneMegabyteIsStoredCutTo500Characters) {
  // Two-byte characters, offset by one ASCII letter, so a cut by bytes
  // rather than by characters would both split one and keep too few.
  const std::string two_bytes = "\xc3\xa9";  // é
  std::string text = "a";
  while (text.size() < kLastErrorSentBytes) text += two_bytes;
  std::string expected = "a";
  for (size_t i = 1; i < kLastErrorCharsMax; ++i) expected += two_bytes;

  const std::string sync_id = sync();
  ApiReply failed = report(sync_id, "failed", {{"error", text}});
  ASSERT_TRUE(IsStatus(failed, 200));
  EXPECT_EQ(failed.json.value("last_error", ""), expected);
  ASSERT_NO_FATAL_FAILURE(restart());
  EXPECT_EQ(connector().value("last_error", ""), expected);
  EXPECT_EQ(connector().value("status", ""), "error");
}

// Seed 000, "after a restart": the log still says running with nobody
// running it; a manual sync is refused, an abort frees it at once.
TEST_F(ConnectorFlowTest, ASyncLeftRunningByACrashIsFreedByAnAbort) {
  ASSERT_FALSE(sync().empty());
  server().kill_hard();
  ASSERT_NO_FATAL_FAILURE(start({}));

  EXPECT_EQ(connector().value("sync_status", ""), "running");
  EXPECT_EQ(client().post("/v1/connectors/c1/sync", json::object()).json.value("error", ""),
            "Sync already in progress");
  ApiReply aborted = client().post("/v1/connectors/c1/sync/abort", json::object());
  ASSERT_TRUE(IsStatus(aborted, 202));
  EXPECT_EQ(aborted.json.value("sync_status", ""), "idle");
  EXPECT_FALSE(sync().empty());
}

}  // namespace
}  // namespace runledger::testing

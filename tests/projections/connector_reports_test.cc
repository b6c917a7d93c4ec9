// Reports from a sync loop (docs/domain.md 2.3, 2.5) and the seed's two tables:
// success and failure move status, reports are fenced by sync_id, an ignored
// report is recorded and changes nothing, last_error is cut and cleared.
#include <gtest/gtest.h>

#include "http/rejection_status.h"
#include "tests/projections/connector_testing.h"

namespace runledger::connectors {
namespace {

using testing::accept;
using testing::conn;
using testing::create;
using testing::create_in_error;
using testing::event_data;
using testing::expect_refused_saying;
using testing::fail_sync;
using testing::Given;
using testing::kMsPerS;
using testing::set_status;
using testing::start;

// Everything but the stream version, which an ignored report does advance.
Connector without_version(Connector c) {
  c.version = 0;
  return c;
}

size_t code_points(const std::string& s) {
  size_t n = 0;
  for (unsigned char b : s) n += (b & 0xC0) != 0x80;
  return n;
}

// ---- succeeded / failed ----

TEST(ConnectorReportSucceeded, FromErrorMakesItActiveIdleAndClearsLastError) {
  Given g;
  create_in_error(g);
  start(g, "s2");
  g.now_ms += 5000;
  Decision d = accept(g, ReportSucceeded{"c1", "s2", {}});
  EXPECT_EQ(Given::types(d), std::vector<std::string>{"SyncSucceeded"});
  const Connector& c = conn(g);
  EXPECT_EQ(c.status, Status::kActive);
  EXPECT_EQ(c.sync_status, SyncStatus::kIdle);
  EXPECT_EQ(c.last_error, "");
  EXPECT_EQ(c.last_synced_at_ms, g.now_ms);
}

TEST(ConnectorReportFailed, FromActiveOrPausedSetsErrorLastErrorAndIdle) {
  Given g;
  create(g, "a");
  start(g, "s-a", "a");
  create(g, "p");
  start(g, "s-p", "p");
  set_status(g, "paused", "p");
  for (const char* id : {"a", "p"}) {
    fail_sync(g, std::string("s-") + id, "timeout", id);
    EXPECT_EQ(conn(g, id).status, Status::kError) << id;
    EXPECT_EQ(conn(g, id).sync_status, SyncStatus::kIdle) << id;
    EXPECT_EQ(conn(g, id).last_error, "timeout") << id;
  }
}

TEST(ConnectorReportFailed, AMegabyteOfMultiByteErrorIsCutAt500CodePoints) {
  Given g;
  create(g);
  start(g, "s1");
  // "동기화" is 3 bytes per character; the emoji is 4: cuts must respect both.
  std::string error = "x";
  while (error.size() < 1'000'000) error += "동기화 실패 \xF0\x9F\x94\xA5 ";
  Decision d = accept(g, ReportFailed{"c1", "s1", error});
  const std::string& kept = conn(g).last_error;
  EXPECT_EQ(code_points(kept), kLastErrorCodePointsMax);
  EXPECT_EQ(error.compare(0, kept.size(), kept), 0);
  EXPECT_NE(static_cast<unsigned char>(error[kept.size()]) & 0xC0, 0x80)
      << "the cut split a character";
  EXPECT_EQ(event_data(g, d, 0)["error"], kept);  // the log holds no more than that
  EXPECT_EQ(view(conn(g))["last_error"], kept);
}

TEST(ConnectorCutCodePoints, KeepsShortTextWholeAndNeverSplitsACharacter) {
  EXPECT_EQ(cut_code_points("abc", 3), "abc");
  EXPECT_EQ(cut_code_points("abcd", 3), "abc");
  EXPECT_EQ(cut_code_points("가나다라", 2), "가나");
  EXPECT_EQ(cut_code_points("a\xF0\x9F\x94\xA5"
                            "b",
                            2),
            "a\xF0\x9F\x94\xA5");
  EXPECT_EQ(cut_code_points("가", 0), "");
  EXPECT_EQ(cut_code_points("", 5), "");
}

TEST(ConnectorReportFailed, ExactlyFiveHundredCodePointsAreKeptWhole) {
  Given g;
  create(g);
  start(g, "s1");
  std::string error;
  for (size_t i = 0; i < kLastErrorCodePointsMax; ++i) error += "é";
  fail_sync(g, "s1", error);
  EXPECT_EQ(conn(g).last_error, error);
}

TEST(ConnectorLastError, IsClearedOnEveryStatusChangeAwayFromError) {
  Given g;
  create_in_error(g, "to-active");
  set_status(g, "active", "to-active");
  create_in_error(g, "to-paused");
  set_status(g, "paused", "to-paused");
  create_in_error(g, "by-success");
  start(g, "s", "by-success");
  accept(g, ReportSucceeded{"by-success", "s", {}});
  for (const char* id : {"to-active", "to-paused", "by-success"}) {
    EXPECT_EQ(conn(g, id).last_error, "") << id;
  }
  create_in_error(g, "by-delete");
  EXPECT_TRUE(accept(g, Delete{"by-delete"}).body["last_error"].is_null());
}

// ---- progress ----

TEST(ConnectorReportProgress, WithoutDocumentsAnswersContinueAndRecordsNothing) {
  Given g;
  create(g);
  start(g, "s1");
  Decision d = accept(g, ReportProgress{"c1", "s1", {}});
  EXPECT_TRUE(d.events.empty());
}

TEST(ConnectorReportProgress, DocumentsMoveThroughTheirStatuses) {
  Given g;
  create(g);
  start(g, "s1");
  accept(g, ReportProgress{"c1", "s1", testing::pending({"d1", "d2", "d3"})});
  DocumentReport r;
  r.running = {"d2", "d3"};
  r.indexed = {"d1"};
  Decision d = accept(g, ReportProgress{"c1", "s1", r});
  EXPECT_EQ(Given::types(d), std::vector<std::string>{"SyncProgressed"});
  EXPECT_EQ(view(conn(g))["documents"],
            (nlohmann::json{{"pending", 0}, {"running", 2}, {"indexed", 1}, {"failed", 0}}));
}

TEST(ConnectorReportProgress, AFailedDocumentIsNotASyncFailure) {
  Given g;
  create(g);
  start(g, "s1");
  DocumentReport r;
  r.failed = {{"d1", "parse error"}};
  accept(g, ReportProgress{"c1", "s1", r});
  EXPECT_EQ(conn(g).status, Status::kActive);
  EXPECT_EQ(conn(g).sync_status, SyncStatus::kRunning);
  EXPECT_EQ(conn(g).documents.at("d1").error, "parse error");
}

TEST(ConnectorReportProgress, MoreDocumentsThanTheLimitIsInvalidInput) {
  Given g;
  create(g);
  start(g, "s1");
  std::vector<std::string> ids(kDocumentsPerReportMax + 1, "d");
  Decision d = g.run(ReportProgress{"c1", "s1", testing::pending(ids)});
  ASSERT_TRUE(d.rejection);
  EXPECT_EQ(http::http_status(d.rejection->code), 422);
  EXPECT_EQ(d.rejection->extra["field"], "documents");
  EXPECT_TRUE(conn(g).documents.empty());
}

// ---- fencing by sync_id ----

TEST(ConnectorFencing, EveryReportAfterAbortIsRecordedIgnoredAndChangesNothing) {
  Given g;
  create(g);
  start(g, "s1");
  accept(g, AbortSync{"c1"});
  for (const std::string report : {"progress", "succeeded", "failed"}) {
    Connector before = conn(g);
    g.now_ms += kMsPerS;  // an update would show in updated_at
    Decision d = report == "progress" ? g.run(ReportProgress{"c1", "s1", testing::pending({"x"})})
                 : report == "succeeded" ? g.run(ReportSucceeded{"c1", "s1", {}})
                                         : g.run(ReportFailed{"c1", "s1", "boom"});
    ASSERT_NO_FATAL_FAILURE(
        expect_refused_saying(d, 409, "stale_sync", "Sync s1 is not the current sync (aborted)"));
    ASSERT_EQ(Given::types(d), std::vector<std::string>{"SyncReportIgnored"});
    nlohmann::json data = event_data(g, d, 0);
    EXPECT_EQ(data["sync_id"], "s1");
    EXPECT_EQ(data["report"], report);
    EXPECT_EQ(data["reason"], "aborted");
    EXPECT_EQ(without_version(conn(g)), without_version(before)) << report;
    EXPECT_EQ(conn(g).version, before.version + 1) << "the ignored report is in the stream";
    EXPECT_EQ(d.rejection->extra.contains("continue"), report == "progress");
  }
  EXPECT_EQ(conn(g).status, Status::kActive);
}

TEST(ConnectorFencing, ProgressOfAStaleSyncAnswersContinueFalse) {
  Given g;
  create(g);
  start(g, "s1");
  accept(g, AbortSync{"c1"});
  start(g, "s2");
  Decision d = g.run(ReportProgress{"c1", "s1", {}});
  ASSERT_NO_FATAL_FAILURE(
      expect_refused_saying(d, 409, "stale_sync", "Sync s1 is not the current sync (aborted)"));
  EXPECT_EQ(d.rejection->extra["continue"], false);
  EXPECT_EQ(d.rejection->extra["current_sync_id"], "s2");
}

TEST(ConnectorFencing, AReportForAFinishedSyncNamesHowItEnded) {
  Given g;
  create(g);
  start(g, "s1");
  accept(g, ReportSucceeded{"c1", "s1", {}});
  expect_refused_saying(g.run(ReportFailed{"c1", "s1", "late"}), 409, "stale_sync",
                        "Sync s1 is not the current sync (succeeded)");
  EXPECT_EQ(conn(g).status, Status::kActive);
  EXPECT_EQ(conn(g).last_error, "");
}

TEST(ConnectorFencing, AReportForAnUnknownSyncLeavesTheRunningOneAlone) {
  Given g;
  create(g);
  start(g, "s1");
  Connector before = conn(g);
  expect_refused_saying(g.run(ReportSucceeded{"c1", "other", {}}), 409, "stale_sync",
                        "Sync other is not the current sync (unknown)");
  EXPECT_EQ(without_version(conn(g)), without_version(before));
  EXPECT_EQ(conn(g).sync_status, SyncStatus::kRunning);
}

TEST(ConnectorFencing, AReportForAnUnknownConnectorIsNotFoundAndRecordsNothing) {
  Given g;
  Decision d = g.run(ReportFailed{"c1", "s1", "x"});
  expect_refused_saying(d, 404, "not_found", "connector c1 not found");
  EXPECT_TRUE(d.events.empty());
  EXPECT_TRUE(g.log().empty());
}

// ---- the seed's tables ----

// Seed 000, "manual sync and abort": each row in turn on one connector.
TEST(ConnectorSeedScenario, ManualSyncAndAbortTable) {
  Given g;
  create(g);
  set_status(g, "paused");
  expect_refused_saying(g.run(StartSync{"c1", "s1"}), 409, "connector_paused",
                        "Connector is paused");
  set_status(g, "active");
  start(g, "s1");
  expect_refused_saying(g.run(StartSync{"c1", "s2"}), 409, "sync_in_progress",
                        "Sync already in progress");
  expect_refused_saying(g.run(Delete{"c1"}), 409, "sync_running",
                        "Cannot delete connector while sync is running");
  accept(g, AbortSync{"c1"});
  EXPECT_EQ(conn(g).sync_status, SyncStatus::kIdle);
  expect_refused_saying(g.run(AbortSync{"c1"}), 409, "no_sync_in_progress", "No sync in progress");
  start(g, "s3");
  EXPECT_EQ(conn(g).sync_id, "s3");
}

// Seed 000, "sync failure vs abort": a failure without abort is an error; an
// exception during an abort is only logged.
TEST(ConnectorSeedScenario, SyncFailureVersusAbortTable) {
  Given g;
  create(g, "failed");
  start(g, "s1", "failed");
  fail_sync(g, "s1", "unhandled exception in dispatch", "failed");
  EXPECT_EQ(conn(g, "failed").status, Status::kError);
  EXPECT_EQ(conn(g, "failed").sync_status, SyncStatus::kIdle);

  create(g, "aborted");
  start(g, "s2", "aborted");
  accept(g, AbortSync{"aborted"});
  Decision late = g.run(ReportFailed{"aborted", "s2", "exception while aborting"});
  expect_refused_saying(late, 409, "stale_sync", "Sync s2 is not the current sync (aborted)");
  EXPECT_EQ(conn(g, "aborted").status, Status::kActive);
  EXPECT_EQ(conn(g, "aborted").sync_status, SyncStatus::kIdle);
  EXPECT_EQ(conn(g, "aborted").last_error, "");
}

// Domain 2.5: the log says running, nobody runs it. A manual sync is refused
// and an abort frees the connector at once.
TEST(ConnectorRestart, ARunningSyncRebuiltFromTheLogCanBeAbortedButNotDuplicated) {
  Given g;
  create(g);
  start(g, "s1");
  State rebuilt = testing::replay(g.log());
  const Connector& c = rebuilt.connectors.by_id.at("c1");
  EXPECT_EQ(c.sync_status, SyncStatus::kRunning);
  expect_refused_saying(decide(rebuilt, StartSync{"c1", "s2"}, g.ctx()), 409, "sync_in_progress",
                        "Sync already in progress");
  Decision abort = decide(rebuilt, AbortSync{"c1"}, g.ctx());
  EXPECT_FALSE(abort.rejection);
  EXPECT_EQ(Given::types(abort), std::vector<std::string>{"SyncAborted"});
}

}  // namespace
}  // namespace runledger::connectors

// Operator commands on a connector (docs/domain.md 2.1, 2.2): every row of the
// 2.1 table in its order, with the exact conflict messages, and abort from
// every status.
#include <gtest/gtest.h>

#include "http/rejection_status.h"
#include "tests/projections/connector_testing.h"

namespace runledger::connectors {
namespace {

using testing::accept;
using testing::begin_deletion;
using testing::conn;
using testing::create;
using testing::create_in_error;
using testing::event_data;
using testing::exists;
using testing::expect_refused_saying;
using testing::Given;
using testing::set_status;
using testing::start;

Update status_update(const std::string& status) {
  Update u;
  u.id = "c1";
  u.status = status;
  return u;
}

// ---- create ----

TEST(ConnectorCreate, NewConnectorIsActiveAndIdle) {
  Given g;
  Decision d = accept(g, Create{"c1", "Orders DB", 0});
  EXPECT_EQ(Given::types(d), std::vector<std::string>{"ConnectorCreated"});
  const Connector& c = conn(g);
  EXPECT_EQ(c.status, Status::kActive);
  EXPECT_EQ(c.sync_status, SyncStatus::kIdle);
  EXPECT_EQ(c.name, "Orders DB");
  EXPECT_EQ(c.version, 1u);
  EXPECT_EQ(c.created_at_ms, g.now_ms);
}

TEST(ConnectorCreate, ExistingIdWithADifferentBodyIsRefusedAsDuplicateAndChangesNothing) {
  Given g;
  create(g);
  Connector before = conn(g);
  for (const Create& other : {Create{"c1", "Another", 0}, Create{"c1", "Connector c1", 60},
                              Create{"c1", "Another", 60}}) {
    Decision d = g.run(other);
    expect_refused_saying(d, 409, "duplicate_id",
                          "Connector c1 already exists with a different body");
    EXPECT_EQ(d.rejection->extra["id"], "c1");
    EXPECT_TRUE(d.events.empty());
  }
  EXPECT_EQ(conn(g), before);
}

// A client that retries a create it saw no answer to gets the connector, as
// a repeated enqueue of a job does, and the log records nothing more.
TEST(ConnectorCreate, ExistingIdWithTheSameBodyIsAcceptedAndRecordsNothing) {
  Given g;
  create(g, "c1", 60);
  Connector before = conn(g);
  Decision d = accept(g, Create{"c1", "Connector c1", 60});
  EXPECT_TRUE(d.events.empty());
  EXPECT_EQ(d.body, nlohmann::json({{"existing", true}}));
  EXPECT_EQ(conn(g), before);
}

// "The same body" is the connector as it is now: after a rename the old
// name is a different body, the new one the same.
TEST(ConnectorCreate, TheSameBodyIsComparedWithTheConnectorAsItIsNow) {
  Given g;
  create(g, "c1", 60);
  Update u;
  u.id = "c1";
  u.name = "Renamed";
  u.sync_schedule_s = 0;
  accept(g, u);
  expect_refused_saying(g.run(Create{"c1", "Connector c1", 60}), 409, "duplicate_id",
                        "Connector c1 already exists with a different body");
  Decision d = accept(g, Create{"c1", "Renamed", 0});
  EXPECT_TRUE(d.events.empty());
  EXPECT_EQ(d.body["existing"], true);
}

TEST(ConnectorCreate, EmptyNameIsInvalidInput) {
  Given g;
  Decision d = g.run(Create{"c1", "", 0});
  ASSERT_TRUE(d.rejection);
  EXPECT_EQ(http::http_status(d.rejection->code), 422);
  EXPECT_EQ(d.rejection->extra["field"], "name");
  EXPECT_FALSE(exists(g));
}

TEST(ConnectorCreate, ScheduleBeyondTheLimitIsInvalidInput) {
  Given g;
  Decision d = g.run(Create{"c1", "n", kSyncScheduleSMax + 1});
  ASSERT_TRUE(d.rejection);
  EXPECT_EQ(http::http_status(d.rejection->code), 422);
  EXPECT_EQ(d.rejection->extra["field"], "sync_schedule_s");
}

// ---- update status ----

TEST(ConnectorUpdate, PauseRecordsTheStatusChangeWithFromAndTo) {
  Given g;
  create(g);
  Decision d = accept(g, status_update("paused"));
  ASSERT_EQ(Given::types(d), std::vector<std::string>{"ConnectorStatusChanged"});
  nlohmann::json data = event_data(g, d, 0);
  EXPECT_EQ(data["from"], "active");
  EXPECT_EQ(data["to"], "paused");
  EXPECT_EQ(conn(g).status, Status::kPaused);
}

TEST(ConnectorUpdate, ResumeFromPausedMakesItActive) {
  Given g;
  create(g);
  set_status(g, "paused");
  accept(g, status_update("active"));
  EXPECT_EQ(conn(g).status, Status::kActive);
}

TEST(ConnectorUpdate, ActiveFromErrorClearsLastError) {
  Given g;
  create_in_error(g);
  ASSERT_EQ(conn(g).last_error, "source unreachable");
  accept(g, status_update("active"));
  EXPECT_EQ(conn(g).status, Status::kActive);
  EXPECT_EQ(conn(g).last_error, "");
}

TEST(ConnectorUpdate, PausedFromErrorClearsLastError) {
  Given g;
  create_in_error(g);
  accept(g, status_update("paused"));
  EXPECT_EQ(conn(g).status, Status::kPaused);
  EXPECT_EQ(conn(g).last_error, "");
  EXPECT_TRUE(view(conn(g))["last_error"].is_null());
}

TEST(ConnectorUpdate, StatusOnADeletingConnectorIsRefused) {
  Given g;
  create(g);
  begin_deletion(g);
  for (const char* to : {"active", "paused"}) {
    Decision d = g.run(status_update(to));
    expect_refused_saying(d, 409, "connector_deleting", "Connector is being deleted");
    EXPECT_TRUE(d.events.empty());
  }
  EXPECT_EQ(conn(g).status, Status::kDeleting);
}

TEST(ConnectorUpdate, StatusErrorOrDeletingIsInvalidInputEvenFromDeleting) {
  Given g;
  create(g);
  for (const char* to : {"error", "deleting"}) {
    Decision d = g.run(status_update(to));
    ASSERT_TRUE(d.rejection) << to;
    EXPECT_EQ(http::http_status(d.rejection->code), 422);
    EXPECT_EQ(code_name(d.rejection->code), "invalid_field");
    EXPECT_EQ(d.rejection->extra, (nlohmann::json{{"field", "status"}}));
    EXPECT_TRUE(d.events.empty());
  }
  begin_deletion(g);
  Decision from_deleting = g.run(status_update("error"));
  ASSERT_TRUE(from_deleting.rejection);
  EXPECT_EQ(http::http_status(from_deleting.rejection->code), 422);
  EXPECT_EQ(conn(g).status, Status::kDeleting);
}

TEST(ConnectorUpdate, SettingTheCurrentStatusRecordsNothing) {
  Given g;
  create(g);
  Decision d = accept(g, status_update("active"));
  EXPECT_TRUE(d.events.empty());
  EXPECT_EQ(conn(g).version, 1u);
}

TEST(ConnectorUpdate, NameAndStatusTogetherRecordBothChanges) {
  Given g;
  create(g);
  Update u = status_update("paused");
  u.name = "Renamed";
  Decision d = accept(g, u);
  EXPECT_EQ(Given::types(d),
            (std::vector<std::string>{"ConnectorStatusChanged", "ConnectorUpdated"}));
  EXPECT_EQ(conn(g).name, "Renamed");
  EXPECT_EQ(conn(g).status, Status::kPaused);
}

TEST(ConnectorUpdate, UnknownConnectorIsNotFound) {
  Given g;
  Decision d = g.run(status_update("paused"));
  expect_refused_saying(d, 404, "not_found", "connector c1 not found");
}

// ---- start sync: deleting, paused, running, otherwise ----

TEST(ConnectorStartSync, FromActiveStartsAManualSync) {
  Given g;
  create(g);
  Decision d = accept(g, StartSync{"c1", "s1"});
  ASSERT_EQ(Given::types(d), std::vector<std::string>{"SyncStarted"});
  nlohmann::json data = event_data(g, d, 0);
  EXPECT_EQ(data["sync_id"], "s1");
  EXPECT_EQ(data["trigger"], "manual");
  EXPECT_EQ(conn(g).sync_status, SyncStatus::kRunning);
  EXPECT_EQ(conn(g).sync_id, "s1");
  EXPECT_EQ(conn(g).sync_started_at_ms, g.now_ms);
}

TEST(ConnectorStartSync, ErrorDoesNotBlockTheNextAttempt) {
  Given g;
  create_in_error(g);
  accept(g, StartSync{"c1", "s2"});
  EXPECT_EQ(conn(g).sync_status, SyncStatus::kRunning);
  EXPECT_EQ(conn(g).status, Status::kError);
}

TEST(ConnectorStartSync, DeletingBeatsRunning) {
  Given g;
  create(g);
  start(g, "s1");
  begin_deletion(g);
  expect_refused_saying(g.run(StartSync{"c1", "s2"}), 409, "connector_deleting",
                        "Connector is being deleted");
}

TEST(ConnectorStartSync, PausedAndRunningAnswersConnectorIsPaused) {
  Given g;
  create(g);
  start(g, "s1");
  set_status(g, "paused");
  Connector before = conn(g);
  Decision d = g.run(StartSync{"c1", "s2"});
  ASSERT_NO_FATAL_FAILURE(expect_refused_saying(d, 409, "connector_paused", "Connector is paused"));
  EXPECT_EQ(d.rejection->extra["status"], "paused");
  EXPECT_EQ(d.rejection->extra["sync_status"], "running");
  EXPECT_EQ(conn(g), before);
}

TEST(ConnectorStartSync, PausedAndIdleAnswersConnectorIsPaused) {
  Given g;
  create(g);
  set_status(g, "paused");
  expect_refused_saying(g.run(StartSync{"c1", "s1"}), 409, "connector_paused",
                        "Connector is paused");
}

TEST(ConnectorStartSync, RunningAnswersSyncAlreadyInProgress) {
  Given g;
  create(g);
  start(g, "s1");
  Decision d = g.run(StartSync{"c1", "s2"});
  ASSERT_NO_FATAL_FAILURE(
      expect_refused_saying(d, 409, "sync_in_progress", "Sync already in progress"));
  EXPECT_EQ(d.rejection->extra["allowed"], (nlohmann::json{"update", "abort"}));
  EXPECT_EQ(conn(g).sync_id, "s1");
}

TEST(ConnectorStartSync, UnknownConnectorIsNotFound) {
  Given g;
  expect_refused_saying(g.run(StartSync{"nope", "s1"}), 404, "not_found",
                        "connector nope not found");
}

// ---- abort ----

TEST(ConnectorAbort, IdleAnswersNoSyncInProgressFromEveryStatus) {
  Given g;
  create(g, "active");
  create(g, "paused");
  set_status(g, "paused", "paused");
  create_in_error(g, "error");
  for (const char* id : {"active", "paused", "error"}) {
    Decision d = g.run(AbortSync{id});
    expect_refused_saying(d, 409, "no_sync_in_progress", "No sync in progress");
    EXPECT_TRUE(d.events.empty());
  }
}

TEST(ConnectorAbort, RunningBecomesIdleAndStatusStaysAsItWasFromEveryStatus) {
  Given g;
  create(g, "active");
  start(g, "s-a", "active");
  create(g, "paused");
  start(g, "s-p", "paused");
  set_status(g, "paused", "paused");
  create_in_error(g, "error");
  start(g, "s-e", "error");
  const std::vector<std::pair<std::string, Status>> cases = {
      {"active", Status::kActive}, {"paused", Status::kPaused}, {"error", Status::kError}};
  for (const auto& [id, status] : cases) {
    Decision d = accept(g, AbortSync{id});
    EXPECT_EQ(Given::types(d), std::vector<std::string>{"SyncAborted"});
    EXPECT_EQ(conn(g, id).sync_status, SyncStatus::kIdle) << id;
    EXPECT_EQ(conn(g, id).status, status) << id;
  }
  EXPECT_EQ(conn(g, "error").last_error, "source unreachable");
}

// ---- delete ----

TEST(ConnectorDelete, RunningAnswersCannotDelete) {
  Given g;
  create(g);
  start(g, "s1");
  Decision d = g.run(Delete{"c1"});
  expect_refused_saying(d, 409, "sync_running", "Cannot delete connector while sync is running");
  EXPECT_TRUE(exists(g));
}

TEST(ConnectorDelete, IdleIsDeletedAndTheReplyShowsItDeleting) {
  Given g;
  create(g, "c1", 60);
  create_in_error(g, "c2");
  Decision d = accept(g, Delete{"c2"});
  EXPECT_EQ(Given::types(d),
            (std::vector<std::string>{"ConnectorDeletionStarted", "ConnectorDeleted"}));
  EXPECT_EQ(d.body["status"], "deleting");
  EXPECT_EQ(d.body["id"], "c2");
  EXPECT_TRUE(d.body["last_error"].is_null());
  EXPECT_FALSE(exists(g, "c2"));
  expect_refused_saying(g.run(StartSync{"c2", "s9"}), 404, "not_found", "connector c2 not found");
  accept(g, Delete{"c1"});
  EXPECT_TRUE(g.state.connectors.slots.empty());
  EXPECT_EQ(next_due_ms(g.state), 0);
}

TEST(ConnectorDelete, DeletedRecordsHowManyDocumentsWentWithIt) {
  Given g;
  create(g);
  start(g, "s1");
  accept(g, ReportSucceeded{"c1", "s1", testing::pending({"d1", "d2", "d3"})});
  Decision d = accept(g, Delete{"c1"});
  EXPECT_EQ(event_data(g, d, 1)["documents_removed"], 3);
  EXPECT_EQ(d.body["documents"]["pending"], 3);
}

TEST(ConnectorDelete, ADeletingConnectorCannotBeDeletedAgain) {
  Given g;
  create(g);
  begin_deletion(g);
  expect_refused_saying(g.run(Delete{"c1"}), 409, "connector_deleting",
                        "Connector is being deleted");
}

// ---- what every conflict carries ----

// docs/api.md "Errors": a refused transition carries "state", the current
// state; for a connector that is its operating state, `status`.
TEST(ConnectorConflicts, EveryConflictCarriesTheStatusAsStateBesidesAllowed) {
  Given g;
  create_in_error(g, "idle-error");
  create(g, "running-active");
  start(g, "s1", "running-active");
  create(g, "idle-paused");
  set_status(g, "paused", "idle-paused");
  create(g, "deleting");
  begin_deletion(g, "deleting");
  struct Case {
    Decision d;
    const char* state;
    const char* sync_status;
  };
  Case cases[] = {
      {g.run(AbortSync{"idle-error"}), "error", "idle"},
      {g.run(StartSync{"running-active", "s2"}), "active", "running"},
      {g.run(Delete{"running-active"}), "active", "running"},
      {g.run(StartSync{"idle-paused", "s3"}), "paused", "idle"},
      {g.run(StartSync{"deleting", "s4"}), "deleting", "idle"},
      {g.run(Delete{"deleting"}), "deleting", "idle"},
  };
  for (const Case& c : cases) {
    ASSERT_TRUE(c.d.rejection);
    SCOPED_TRACE(c.d.rejection->message);
    const nlohmann::json& extra = c.d.rejection->extra;
    EXPECT_EQ(http::http_status(c.d.rejection->code), 409);
    EXPECT_EQ(extra.value("state", ""), c.state) << extra.dump();
    EXPECT_EQ(extra.value("status", ""), c.state);
    EXPECT_EQ(extra.value("sync_status", ""), c.sync_status);
    EXPECT_TRUE(extra.contains("allowed") && extra.at("allowed").is_array()) << extra.dump();
  }
}

TEST(ConnectorDelete, ADeletedIdMayBeCreatedAfresh) {
  Given g;
  create_in_error(g);
  accept(g, Delete{"c1"});
  accept(g, Create{"c1", "Again", 0});
  EXPECT_EQ(conn(g).status, Status::kActive);
  EXPECT_EQ(conn(g).last_error, "");
  EXPECT_TRUE(conn(g).ended_syncs.empty());
}

}  // namespace
}  // namespace runledger::connectors

// The error table of docs/api.md on a real server: 400, 404, 405 and 409,
// each with the JSON shape {"error", "code", ...}, and each leaving the log
// exactly as it was (a 4xx never changes state).
#include <string>

#include <gtest/gtest.h>

#include "tests/http/job_calls.h"
#include "tests/http/server_fixture.h"

namespace runledger::testing {
namespace {

using ErrorStatusTest = ServerTest;

TEST_F(ErrorStatusTest, MalformedJsonIs400AndChangesNothing) {
  ASSERT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
  const size_t before = client().event_count();

  EXPECT_TRUE(
      IsError(client().post_raw("/v1/jobs", R"({"kind": "k", "target": )"), 400, "invalid_json"));
  EXPECT_TRUE(IsError(client().post_raw("/v1/jobs", "{'kind': 'k'}"), 400, "invalid_json"));
  EXPECT_TRUE(IsError(client().post_raw("/v1/connectors", "\xff\xfe{}"), 400, "invalid_json"));
  EXPECT_TRUE(IsError(client().send("PATCH", "/v1/connectors/c1", "not json at all", {}), 400,
                      "invalid_json"));

  EXPECT_EQ(client().event_count(), before);
}

TEST_F(ErrorStatusTest, BodyThatIsNotAnObjectIs400) {
  const size_t before = client().event_count();

  EXPECT_TRUE(IsError(client().post_raw("/v1/jobs", "[1, 2, 3]"), 400, "invalid_json"));
  EXPECT_TRUE(IsError(client().post_raw("/v1/jobs", "\"a string\""), 400, "invalid_json"));
  EXPECT_TRUE(IsError(client().post_raw("/v1/jobs", "42"), 400, "invalid_json"));
  EXPECT_TRUE(IsError(client().post_raw("/v1/jobs/claim", "null"), 400, "invalid_json"));

  EXPECT_EQ(client().event_count(), before);
}

TEST_F(ErrorStatusTest, UnknownEntitiesAre404) {
  ASSERT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
  const size_t before = client().event_count();

  EXPECT_TRUE(IsError(client().get("/v1/jobs/nope"), 404, "not_found"));
  EXPECT_TRUE(IsError(client().get("/v1/connectors/nope"), 404, "not_found"));
  EXPECT_TRUE(IsError(client().get("/v1/holds/nope"), 404, "not_found"));
  EXPECT_TRUE(IsError(client().get("/v1/jobs/nope/events"), 404, "not_found"));
  EXPECT_TRUE(
      IsError(client().post("/v1/jobs/nope/cancel", nlohmann::json::object()), 404, "not_found"));
  EXPECT_TRUE(IsError(client().post("/v1/connectors/nope/sync", nlohmann::json::object()), 404,
                      "not_found"));
  EXPECT_TRUE(IsError(client().post("/v1/holds/nope/release", {{"note", "n"}}), 404, "not_found"));

  EXPECT_EQ(client().event_count(), before);
}

TEST_F(ErrorStatusTest, UnknownRouteIs404) {
  EXPECT_TRUE(IsError(client().get("/v1/nothing-here"), 404, "not_found"));
  EXPECT_TRUE(IsError(client().get("/v2/jobs"), 404, "not_found"));
  EXPECT_TRUE(
      IsError(client().post("/v1/jobs/j1/fly", nlohmann::json::object()), 404, "not_found"));
  EXPECT_EQ(client().event_count(), 0u);
}

TEST_F(ErrorStatusTest, StepNotInThePlanIs404StepNotFound) {
  ASSERT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
  ApiReply claimed = claim(client(), "w1", "k");
  ASSERT_TRUE(IsStatus(claimed, 200));
  const std::string token = token_of(claimed);
  ASSERT_TRUE(IsStatus(worker_call(client(), "j1", "start", token), 200));
  const size_t before = client().event_count();

  EXPECT_TRUE(
      IsError(worker_call(client(), "j1", "steps/PUBLISH/start", token), 404, "step_not_found"));
  EXPECT_TRUE(
      IsError(worker_call(client(), "j1", "steps/fetch/done", token), 404, "step_not_found"));

  EXPECT_EQ(client().event_count(), before);
  EXPECT_EQ(step_state(job_view(client(), "j1"), "FETCH"), "PENDING");
}

TEST_F(ErrorStatusTest, KnownPathWithAnotherMethodIs405) {
  ASSERT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
  const size_t before = client().event_count();

  // Each says in Allow what the path does take (RFC 9110, 15.5.6).
  ApiReply on_job = client().del("/v1/jobs/j1");
  EXPECT_TRUE(IsError(on_job, 405, "method_not_allowed"));
  EXPECT_EQ(on_job.header("Allow"), "GET, HEAD");
  ApiReply on_jobs = client().send("PUT", "/v1/jobs", "{}", {});
  EXPECT_TRUE(IsError(on_jobs, 405, "method_not_allowed"));
  EXPECT_EQ(on_jobs.header("Allow"), "GET, HEAD, POST");
  ApiReply on_health = client().post("/v1/health", nlohmann::json::object());
  EXPECT_TRUE(IsError(on_health, 405, "method_not_allowed"));
  EXPECT_EQ(on_health.header("Allow"), "GET, HEAD");
  // The live stream is served before routing, and still a path like the others.
  ApiReply on_live = client().post("/v1/events/live", nlohmann::json::object());
  EXPECT_TRUE(IsError(on_live, 405, "method_not_allowed"));
  EXPECT_EQ(on_live.header("Allow"), "GET, HEAD");
  // Spelled as the router would match it, the path is still the stream's.
  ApiReply live_head = client().send("HEAD", "/v1//events/%6Cive/", "", {});
  EXPECT_EQ(live_head.status, 200);
  EXPECT_EQ(live_head.header("Content-Type"), "text/event-stream");
  // Other replies carry none.
  EXPECT_EQ(client().get("/v1/jobs/j1").header("Allow"), "");

  EXPECT_EQ(client().event_count(), before);
  EXPECT_EQ(job_view(client(), "j1").value("state", ""), "QUEUED");
}

TEST_F(ErrorStatusTest, InvalidTransitionIs409WithStateAndAllowed) {
  ASSERT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
  const size_t before = client().event_count();

  // A rerun never starts new work while the job is still queued.
  ApiReply rerun = client().post("/v1/jobs/j1/rerun", nlohmann::json::object());
  ASSERT_TRUE(IsError(rerun, 409, "invalid_transition"));
  EXPECT_EQ(rerun.json.value("state", ""), "QUEUED");
  ASSERT_TRUE(rerun.json.contains("allowed")) << rerun.body;
  EXPECT_EQ(rerun.json.at("allowed"), nlohmann::json({"claim", "cancel"}));
  EXPECT_EQ(client().event_count(), before);

  // A terminal attempt is never changed: cancelling it again is refused.
  ASSERT_TRUE(IsStatus(client().post("/v1/jobs/j1/cancel", nlohmann::json::object()), 202));
  const size_t cancelled = client().event_count();
  ApiReply again = client().post("/v1/jobs/j1/cancel", nlohmann::json::object());
  ASSERT_TRUE(IsError(again, 409, "invalid_transition"));
  EXPECT_EQ(again.json.value("state", ""), "CANCELLED");
  EXPECT_EQ(again.json.value("allowed", nlohmann::json()), nlohmann::json({"rerun"}));
  EXPECT_EQ(client().event_count(), cancelled);
}

TEST_F(ErrorStatusTest, StepStartBeforeTheAttemptStartedIs409) {
  ASSERT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
  ApiReply claimed = claim(client(), "w1", "k");
  ASSERT_TRUE(IsStatus(claimed, 200));
  const size_t before = client().event_count();

  ApiReply r = worker_call(client(), "j1", "steps/FETCH/start", token_of(claimed));
  ASSERT_TRUE(IsError(r, 409, "invalid_transition"));
  EXPECT_EQ(r.json.value("state", ""), "LEASED");
  EXPECT_TRUE(r.json.value("allowed", nlohmann::json()).is_array()) << r.body;
  EXPECT_EQ(client().event_count(), before);
}

TEST_F(ErrorStatusTest, LeaseTokenThatIsNotTheCurrentOneIs409LeaseMismatch) {
  ASSERT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
  ApiReply claimed = claim(client(), "w1", "k");
  ASSERT_TRUE(IsStatus(claimed, 200));
  const std::string wrong(32, 'a');
  ASSERT_NE(token_of(claimed), wrong);
  const size_t before = client().event_count();

  EXPECT_TRUE(IsError(worker_call(client(), "j1", "heartbeat", wrong), 409, "lease_mismatch"));
  EXPECT_TRUE(IsError(worker_call(client(), "j1", "start", wrong), 409, "lease_mismatch"));
  EXPECT_TRUE(IsError(worker_call(client(), "j1", "release", wrong), 409, "lease_mismatch"));

  EXPECT_EQ(client().event_count(), before);
  EXPECT_EQ(job_view(client(), "j1").value("state", ""), "LEASED");
}

TEST_F(ErrorStatusTest, DuplicateJobIdWithAnotherBodyIs409) {
  ASSERT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
  const size_t before = client().event_count();

  ApiReply same = enqueue(client(), "j1", "t1", "k");
  EXPECT_TRUE(IsStatus(same, 200));
  EXPECT_EQ(same.json.value("id", ""), "j1");
  ApiReply other = enqueue(client(), "j1", "t2", "k");
  EXPECT_TRUE(IsError(other, 409, "duplicate_id"));

  EXPECT_EQ(client().event_count(), before);
}

TEST_F(ErrorStatusTest, DuplicateConnectorIdWithTheSameBodyIs200AndAnotherBodyIs409) {
  const nlohmann::json body = {{"id", "c1"}, {"name", "Shop"}, {"sync_schedule_s", 60}};
  ApiReply created = client().post("/v1/connectors", body);
  ASSERT_TRUE(IsStatus(created, 201));
  const size_t before = client().event_count();

  ApiReply same = client().post("/v1/connectors", body);
  EXPECT_TRUE(IsStatus(same, 200));
  EXPECT_EQ(same.json, created.json);
  ApiReply other_name =
      client().post("/v1/connectors", {{"id", "c1"}, {"name", "Shop B"}, {"sync_schedule_s", 60}});
  EXPECT_TRUE(IsError(other_name, 409, "duplicate_id"));
  EXPECT_EQ(other_name.json.value("error", ""),
            "Connector c1 already exists with a different body");
  ApiReply other_schedule = client().post("/v1/connectors", {{"id", "c1"}, {"name", "Shop"}});
  EXPECT_TRUE(IsError(other_schedule, 409, "duplicate_id"));

  EXPECT_EQ(client().event_count(), before);
}

// The exact messages of docs/domain.md 2.1 are the `error` strings.
TEST_F(ErrorStatusTest, ConnectorConflictsCarryTheExactMessages) {
  ASSERT_TRUE(IsStatus(client().post("/v1/connectors", {{"id", "c1"}, {"name", "Shop"}}), 201));
  auto message = [](const ApiReply& r) { return r.json.value("error", std::string()); };

  ApiReply abort_idle = client().post("/v1/connectors/c1/sync/abort", nlohmann::json::object());
  EXPECT_TRUE(IsError(abort_idle, 409, "no_sync_in_progress"));
  EXPECT_EQ(message(abort_idle), "No sync in progress");

  ASSERT_TRUE(IsStatus(client().post("/v1/connectors/c1/sync", nlohmann::json::object()), 202));
  const size_t running = client().event_count();
  ApiReply twice = client().post("/v1/connectors/c1/sync", nlohmann::json::object());
  EXPECT_TRUE(IsError(twice, 409, "sync_in_progress"));
  EXPECT_EQ(message(twice), "Sync already in progress");
  ApiReply del = client().del("/v1/connectors/c1");
  EXPECT_TRUE(IsError(del, 409, "sync_running"));
  EXPECT_EQ(message(del), "Cannot delete connector while sync is running");
  EXPECT_EQ(client().event_count(), running);

  ASSERT_TRUE(
      IsStatus(client().post("/v1/connectors/c1/sync/abort", nlohmann::json::object()), 202));
  ASSERT_TRUE(IsStatus(client().patch("/v1/connectors/c1", {{"status", "paused"}}), 200));
  const size_t paused = client().event_count();
  ApiReply sync_paused = client().post("/v1/connectors/c1/sync", nlohmann::json::object());
  EXPECT_TRUE(IsError(sync_paused, 409, "connector_paused"));
  EXPECT_EQ(message(sync_paused), "Connector is paused");
  EXPECT_EQ(client().event_count(), paused);
}

// A connector's refusal names its current state as every refused transition
// does ("state": its status), besides "status", "sync_status" and "allowed".
TEST_F(ErrorStatusTest, ConnectorConflictsCarryStateAndAllowed) {
  ASSERT_TRUE(IsStatus(client().post("/v1/connectors", {{"id", "c1"}, {"name", "Shop"}}), 201));
  auto expect_state = [](const ApiReply& r, const std::string& state,
                         const std::string& sync_status, const nlohmann::json& allowed) {
    EXPECT_EQ(r.status, 409) << r.body;
    EXPECT_EQ(r.json.value("state", ""), state) << r.body;
    EXPECT_EQ(r.json.value("status", ""), state) << r.body;
    EXPECT_EQ(r.json.value("sync_status", ""), sync_status) << r.body;
    EXPECT_EQ(r.json.value("allowed", nlohmann::json()), allowed) << r.body;
  };

  expect_state(client().post("/v1/connectors/c1/sync/abort", nlohmann::json::object()), "active",
               "idle", {"update", "sync", "delete"});
  ASSERT_TRUE(IsStatus(client().post("/v1/connectors/c1/sync", nlohmann::json::object()), 202));
  expect_state(client().del("/v1/connectors/c1"), "active", "running", {"update", "abort"});
  ASSERT_TRUE(
      IsStatus(client().post("/v1/connectors/c1/sync/abort", nlohmann::json::object()), 202));
  ASSERT_TRUE(IsStatus(client().patch("/v1/connectors/c1", {{"status", "paused"}}), 200));
  expect_state(client().post("/v1/connectors/c1/sync", nlohmann::json::object()), "paused", "idle",
               {"update", "delete"});
}

// A delete completes its cascade in the same command, so "Connector is being
// deleted" cannot be observed over HTTP: later commands find no connector.
TEST_F(ErrorStatusTest, CommandsOnADeletedConnectorAre404) {
  ASSERT_TRUE(IsStatus(client().post("/v1/connectors", {{"id", "c1"}, {"name", "Shop"}}), 201));
  ASSERT_TRUE(IsStatus(client().del("/v1/connectors/c1"), 202));
  const size_t before = client().event_count();

  EXPECT_TRUE(
      IsError(client().patch("/v1/connectors/c1", {{"status", "active"}}), 404, "not_found"));
  EXPECT_TRUE(
      IsError(client().post("/v1/connectors/c1/sync", nlohmann::json::object()), 404, "not_found"));
  EXPECT_TRUE(IsError(client().del("/v1/connectors/c1"), 404, "not_found"));

  EXPECT_EQ(client().event_count(), before);
}

}  // namespace
}  // namespace runledger::testing

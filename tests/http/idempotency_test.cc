// Idempotency-Key over HTTP (docs/api.md "Idempotency"): the same request
// with the same key gets the first reply again, byte for byte, and changes
// nothing, also when that first reply was a 4xx and also after a restart;
// the same key on another request is 409 idempotency_key_reused.
#include <string>

#include <gtest/gtest.h>

#include "tests/http/job_calls.h"
#include "tests/http/raw_connection.h"
#include "tests/http/server_fixture.h"

namespace runledger::testing {
namespace {

using nlohmann::json;
using IdempotencyTest = ServerTest;

constexpr size_t kKeyCharsMax = 128;

Headers key(const std::string& k) { return {{"Idempotency-Key", k}}; }

TEST_F(IdempotencyTest, SameKeySameRequestGetsTheFirstReplyAndChangesNothing) {
  const json body = {{"id", "j1"}, {"kind", "k"}, {"target", "t1"}};
  ApiReply first = client().post("/v1/jobs", body, key("enqueue-1"));
  ASSERT_TRUE(IsStatus(first, 201));
  const size_t after_first = client().event_count();

  ApiReply again = client().post("/v1/jobs", body, key("enqueue-1"));

  EXPECT_EQ(again.status, 201);
  EXPECT_EQ(again.body, first.body);
  EXPECT_EQ(client().event_count(), after_first);
}

TEST_F(IdempotencyTest, SameKeyOnAnotherRequestIs409AndChangesNothing) {
  ASSERT_TRUE(IsStatus(
      client().post("/v1/jobs", {{"id", "j1"}, {"kind", "k"}, {"target", "t1"}}, key("k-1")), 201));
  const size_t before = client().event_count();

  EXPECT_TRUE(IsError(
      client().post("/v1/jobs", {{"id", "j1"}, {"kind", "k"}, {"target", "t2"}}, key("k-1")), 409,
      "idempotency_key_reused"));
  EXPECT_TRUE(IsError(client().post("/v1/connectors", {{"id", "c1"}, {"name", "n"}}, key("k-1")),
                      409, "idempotency_key_reused"));

  EXPECT_EQ(client().event_count(), before);
  EXPECT_TRUE(IsError(client().get("/v1/connectors/c1"), 404, "not_found"));
  EXPECT_EQ(job_view(client(), "j1").value("target", ""), "t1");
}

// The first reply is kept even when it was a refusal, so a retry after the
// state changed still sees the refusal and starts nothing.
TEST_F(IdempotencyTest, A409FirstReplyIsReplayedEvenAfterTheStateAllowsTheCommand) {
  ASSERT_TRUE(IsStatus(client().post("/v1/connectors", {{"id", "c1"}, {"name", "n"}}), 201));
  ASSERT_TRUE(IsStatus(client().patch("/v1/connectors/c1", {{"status", "paused"}}), 200));
  ApiReply first = client().post("/v1/connectors/c1/sync", json::object(), key("sync-1"));
  ASSERT_TRUE(IsError(first, 409, "connector_paused"));
  ASSERT_TRUE(IsStatus(client().patch("/v1/connectors/c1", {{"status", "active"}}), 200));
  const size_t before = client().event_count();

  ApiReply again = client().post("/v1/connectors/c1/sync", json::object(), key("sync-1"));

  EXPECT_EQ(again.status, 409);
  EXPECT_EQ(again.body, first.body);
  EXPECT_EQ(client().event_count(), before);
  EXPECT_EQ(client().get("/v1/connectors/c1").json.value("sync_status", ""), "idle");
  // Under a new key the same command is accepted: the replay was the key's doing.
  EXPECT_TRUE(
      IsStatus(client().post("/v1/connectors/c1/sync", json::object(), key("sync-2")), 202));
}

TEST_F(IdempotencyTest, A422FirstReplyIsReplayed) {
  const std::string body = R"({"target": "t1"})";
  ApiReply first = client().post_raw("/v1/jobs", body, key("bad-1"));
  ASSERT_TRUE(IsError(first, 422, "missing_field"));

  ApiReply again = client().post_raw("/v1/jobs", body, key("bad-1"));

  EXPECT_EQ(again.status, 422);
  EXPECT_EQ(again.body, first.body);
  EXPECT_TRUE(IsError(client().post_raw("/v1/jobs", R"({"target": "t2"})", key("bad-1")), 409,
                      "idempotency_key_reused"));
  EXPECT_EQ(client().event_count(), 0u);
}

// A worker that lost the reply of its claim and retries gets the same job
// and the same token, not a second job.
TEST_F(IdempotencyTest, ARetriedClaimGetsTheSameLease) {
  ASSERT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
  ASSERT_TRUE(IsStatus(enqueue(client(), "j2", "t2", "k"), 201));
  const json body = {{"worker", "w1"}, {"kinds", {"k"}}, {"lease_s", kTestLeaseS}};
  ApiReply first = client().post("/v1/jobs/claim", body, key("claim-1"));
  ASSERT_TRUE(IsStatus(first, 200));

  ApiReply again = client().post("/v1/jobs/claim", body, key("claim-1"));

  EXPECT_EQ(again.body, first.body);
  EXPECT_EQ(job_view(client(), "j1").value("state", ""), "LEASED");
  EXPECT_EQ(job_view(client(), "j2").value("state", ""), "QUEUED");
}

TEST_F(IdempotencyTest, KeysAreKeptAcrossARestart) {
  const json body = {{"id", "j1"}, {"kind", "k"}, {"target", "t1"}};
  ApiReply first = client().post("/v1/jobs", body, key("enqueue-1"));
  ASSERT_TRUE(IsStatus(first, 201));
  ASSERT_TRUE(IsStatus(client().post("/v1/jobs/j1/cancel", json::object()), 202));
  const size_t before = client().event_count();
  ASSERT_NO_FATAL_FAILURE(restart());

  ApiReply again = client().post("/v1/jobs", body, key("enqueue-1"));

  EXPECT_EQ(again.status, 201);
  EXPECT_EQ(again.body, first.body);
  EXPECT_EQ(client().event_count(), before);
  EXPECT_EQ(job_view(client(), "j1").value("state", ""), "CANCELLED");
}

// "this holds for a 4xx first reply too": also for the refusals the server
// makes before any handler runs.
TEST_F(IdempotencyTest, ARouteOrMethodRefusalIsKeptUnderItsKey) {
  ApiReply no_route = client().post("/v1/nope", {{"id", "j1"}}, key("route-1"));
  ASSERT_TRUE(IsError(no_route, 404, "not_found"));
  ApiReply no_method = client().del("/v1/health", key("method-1"));
  ASSERT_TRUE(IsError(no_method, 405, "method_not_allowed"));

  ApiReply again = client().post("/v1/nope", {{"id", "j1"}}, key("route-1"));
  EXPECT_EQ(again.status, 404);
  EXPECT_EQ(again.body, no_route.body);
  ApiReply method_again = client().del("/v1/health", key("method-1"));
  EXPECT_EQ(method_again.status, 405);
  EXPECT_EQ(method_again.body, no_method.body);
  EXPECT_EQ(method_again.header("Allow"), "GET, HEAD");
  const json job = {{"id", "j1"}, {"kind", "k"}, {"target", "t1"}};
  EXPECT_TRUE(
      IsError(client().post("/v1/jobs", job, key("route-1")), 409, "idempotency_key_reused"));
  EXPECT_TRUE(
      IsError(client().post("/v1/jobs", job, key("method-1")), 409, "idempotency_key_reused"));
  EXPECT_EQ(client().event_count(), 0u);
  EXPECT_TRUE(IsError(client().get("/v1/jobs/j1"), 404, "not_found"));
}

TEST_F(IdempotencyTest, ABodyOverTheLimitIsKeptUnderItsKeyUnread) {
  RawConnection conn(server().port(), deadline_in(kReplyWait));
  ASSERT_TRUE(conn.connected()) << conn.connect_errno();
  const std::string head =
      request_head("POST", "/v1/jobs",
                   "Content-Type: application/json\r\nIdempotency-Key: big-1\r\nContent-Length: " +
                       std::to_string(kBodyLimitBytes + 1) + "\r\n");
  ASSERT_TRUE(conn.send_all(head, deadline_in(kReplyWait)));
  std::string response;
  ASSERT_EQ(conn.read_response(&response, deadline_in(kReplyWait)), RawConnection::ReadEnd::kDone)
      << response;
  ASSERT_EQ(status_of(response), 413) << response;

  const json job = {{"id", "j1"}, {"kind", "k"}, {"target", "t1"}};
  EXPECT_TRUE(IsError(client().post("/v1/jobs", job, key("big-1")), 409, "idempotency_key_reused"));
  EXPECT_EQ(client().event_count(), 0u);
  EXPECT_TRUE(IsError(client().get("/v1/jobs/j1"), 404, "not_found"));
}

// "1-128 chars": printable ASCII, the space among them.
TEST_F(IdempotencyTest, AKeyAndAnActorMayHoldSpaces) {
  const json job = {{"id", "j1"}, {"kind", "k"}, {"target", "t1"}};
  Headers h = {{"Idempotency-Key", "retry of job 1"}, {"X-Runledger-Actor", "alice smith"}};
  ApiReply first = client().post("/v1/jobs", job, h);
  ASSERT_TRUE(IsStatus(first, 201));
  ApiReply again = client().post("/v1/jobs", job, h);
  EXPECT_EQ(again.status, 201);
  EXPECT_EQ(again.body, first.body);
  EXPECT_EQ(client().event_count(), 1u);
  EXPECT_EQ(client().get("/v1/jobs/j1/events").json["events"][0].value("actor", ""), "alice smith");
}

TEST_F(IdempotencyTest, AKeyOfTheWrongShapeIs422) {
  ASSERT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
  const size_t before = client().event_count();
  ApiReply r = client().post("/v1/jobs", {{"id", "j2"}, {"kind", "k"}, {"target", "t"}},
                             key(std::string(kKeyCharsMax + 1, 'k')));
  EXPECT_TRUE(IsError(r, 422, "invalid_field"));
  EXPECT_EQ(r.json.value("field", ""), "Idempotency-Key") << r.body;
  // A fresh connection: whether the refused request's connection stays
  // usable is SocketTest's concern.
  ApiClient fresh(server().port());
  EXPECT_EQ(fresh.event_count(), before);
  EXPECT_TRUE(IsError(fresh.get("/v1/jobs/j2"), 404, "not_found"));
}

}  // namespace
}  // namespace runledger::testing

// 503 on a real server: started with --read-only (forensics), runledgerd
// refuses every write with 503 and changes nothing, serves every read, and
// says in /v1/health why it cannot write.
#include <string>

#include <gtest/gtest.h>

#include "tests/http/job_calls.h"
#include "tests/http/server_fixture.h"

namespace runledger::testing {
namespace {

using nlohmann::json;
using ReadOnlyTest = ServerTest;

TEST_F(ReadOnlyTest, WritesAre503AndReadsAreServed) {
  ASSERT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
  ASSERT_TRUE(IsStatus(client().post("/v1/connectors", {{"id", "c1"}, {"name", "Shop"}}), 201));
  ASSERT_NO_FATAL_FAILURE(restart({"--read-only"}));
  const size_t before = client().event_count();
  ASSERT_GT(before, 0u);

  EXPECT_TRUE(IsError(enqueue(client(), "j2", "t2", "k"), 503, "unavailable"));
  EXPECT_TRUE(IsError(claim(client(), "w1", "k"), 503, "unavailable"));
  EXPECT_TRUE(IsError(client().post("/v1/jobs/j1/cancel", json::object()), 503, "unavailable"));
  EXPECT_TRUE(
      IsError(client().patch("/v1/connectors/c1", {{"status", "paused"}}), 503, "unavailable"));
  EXPECT_TRUE(IsError(client().post("/v1/connectors/c1/sync", json::object()), 503, "unavailable"));
  EXPECT_TRUE(IsError(client().del("/v1/connectors/c1"), 503, "unavailable"));
  EXPECT_TRUE(IsError(
      client().post("/v1/holds", {{"target", "t1"}, {"kind", "RESULT_UNKNOWN"}, {"reason", "r"}}),
      503, "unavailable"));

  ApiReply job = client().get("/v1/jobs/j1");
  ASSERT_TRUE(IsStatus(job, 200));
  EXPECT_EQ(job.json.value("state", ""), "QUEUED");
  ApiReply conn = client().get("/v1/connectors/c1");
  ASSERT_TRUE(IsStatus(conn, 200));
  EXPECT_EQ(conn.json.value("status", ""), "active");
  EXPECT_TRUE(IsStatus(client().get("/v1/jobs"), 200));
  EXPECT_TRUE(IsStatus(client().get("/v1/jobs/j1/events"), 200));
  EXPECT_TRUE(IsStatus(client().get("/v1/targets/t1/gate"), 200));
  EXPECT_EQ(client().event_count(), before);

  ApiReply health = client().get("/v1/health");
  EXPECT_TRUE(IsError(health, 503, "unavailable"));
  EXPECT_NE(health.json.value("error", "").find("read-only"), std::string::npos) << health.body;
}

// A request refused for what it is says so, with or without an
// Idempotency-Key: a read-only server keeps no key, so there is nothing to
// write and no reason for a 503.
TEST_F(ReadOnlyTest, RefusalsOfBadRequestsAreTheirOwnAlsoUnderAKey) {
  ASSERT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
  ASSERT_NO_FATAL_FAILURE(restart({"--read-only"}));
  const size_t before = client().event_count();
  const Headers key = {{"Idempotency-Key", "ro-1"}};

  EXPECT_TRUE(IsError(client().post_raw("/v1/jobs", "{bad", key), 400, "invalid_json"));
  EXPECT_TRUE(IsError(client().post("/v1/jobs", {{"target", "t"}}, key), 422, "missing_field"));
  EXPECT_TRUE(IsError(client().post("/v1/nope", json::object(), key), 404, "not_found"));
  EXPECT_TRUE(IsError(client().del("/v1/health", key), 405, "method_not_allowed"));
  EXPECT_TRUE(IsError(enqueue(client(), "j2", "t2", "k"), 503, "unavailable"));
  EXPECT_EQ(client().event_count(), before);
}

TEST_F(ReadOnlyTest, ARestartWithoutTheFlagWritesAgainFromTheSameLog) {
  ASSERT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
  const size_t before = client().event_count();
  ASSERT_NO_FATAL_FAILURE(restart({"--read-only"}));
  EXPECT_TRUE(IsError(enqueue(client(), "j2", "t1", "k"), 503, "unavailable"));
  ASSERT_NO_FATAL_FAILURE(restart());

  EXPECT_EQ(client().event_count(), before);
  EXPECT_TRUE(IsStatus(enqueue(client(), "j2", "t1", "k"), 201));
  EXPECT_EQ(client().event_count(), before + 1);
  EXPECT_TRUE(IsStatus(client().get("/v1/health"), 200));
}

}  // namespace
}  // namespace runledger::testing

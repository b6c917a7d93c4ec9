// Holds and the start gate end to end on a real server, as seed 003's
// recovery trial (docs/domain.md 1.8 and 3): a lost submit reply holds the
// target until an operator releases it with evidence; a restarted worker
// reattaches with a new token and fences the old one; an operator's hold
// blocks new work until released; a RESULT_UNKNOWN hold does not.
#include <string>

#include <gtest/gtest.h>

#include "tests/http/job_calls.h"
#include "tests/http/server_fixture.h"

namespace runledger::testing {
namespace {

using nlohmann::json;

// A target with a '/' and a ':', as path segment and query value.
const std::string kTarget = "edge/intraday:10";
const std::string kTargetEncoded = "edge%2Fintraday%3A10";

class HoldRecoveryTest : public ServerTest {
 protected:
  // j1 on kTarget, claimed and started with `handle`: its token.
  std::string running_job(const std::string& handle) {
    EXPECT_TRUE(IsStatus(enqueue(client(), "j1", kTarget, "k"), 201));
    ApiReply claimed = claim(client(), "w1", "k");
    EXPECT_TRUE(IsStatus(claimed, 200));
    std::string token = token_of(claimed);
    json extra = handle.empty() ? json::object() : json{{"execution_handle", handle}};
    EXPECT_TRUE(IsStatus(worker_call(client(), "j1", "start", token, extra), 200));
    return token;
  }
  json gate() { return client().get("/v1/targets/" + kTargetEncoded + "/gate").json; }
  json open_holds() {
    return client().get("/v1/holds?open=true&target=" + kTargetEncoded).json.at("holds");
  }
};

TEST_F(HoldRecoveryTest, LostSubmitReplyHoldsTheTargetUntilReleasedWithEvidence) {
  const std::string token = running_job("");
  ApiReply unknown =
      worker_call(client(), "j1", "outcome-unknown", token,
                  {{"kind", "EXECUTION_STATE_UNKNOWN"},
                   {"detail", "RunTask reply lost; lookup by startedBy found none"}});
  ASSERT_TRUE(IsStatus(unknown, 200));
  EXPECT_EQ(unknown.json.value("state", ""), "STALE");

  const json holds = open_holds();
  ASSERT_EQ(holds.size(), 1u) << holds.dump();
  const std::string hold = holds.at(0).value("id", "");
  EXPECT_EQ(holds.at(0).value("kind", ""), "EXECUTION_STATE_UNKNOWN");
  EXPECT_EQ(holds.at(0).value("job", ""), "j1");
  EXPECT_EQ(holds.at(0).value("target", ""), kTarget);
  json g = gate();
  EXPECT_EQ(g.value("may_start", true), false);
  ASSERT_EQ(g.at("reasons").size(), 1u) << g.dump();
  EXPECT_EQ(g.at("reasons").at(0).value("code", ""), "hold");
  EXPECT_EQ(g.at("reasons").at(0).value("hold", ""), hold);

  // A new run for the target stops at the gate: nothing is handed out.
  ASSERT_TRUE(IsStatus(enqueue(client(), "j2", kTarget, "k"), 201));
  EXPECT_EQ(claim(client(), "w2", "k").status, 204);
  EXPECT_EQ(job_view(client(), "j2").value("blocked_by", json()), json({{"hold", hold}}));

  // A release without what it needs changes nothing.
  const size_t before = client().event_count();
  const std::string release = "/v1/holds/" + hold + "/release";
  ApiReply no_proof = client().post(release, {{"note", "stop requested"}});
  EXPECT_TRUE(IsError(no_proof, 422, "invalid_field"));
  EXPECT_EQ(no_proof.json.value("field", ""), "execution_stopped");
  ApiReply no_outcome = client().post(release, {{"note", "stopped"}, {"execution_stopped", true}});
  EXPECT_TRUE(IsError(no_outcome, 422, "missing_field"));
  EXPECT_EQ(no_outcome.json.value("field", ""), "outcome");
  EXPECT_EQ(client().event_count(), before);
  EXPECT_EQ(gate().value("may_start", true), false);

  ApiReply released = client().post(release,
                                    {{"note", "ECS task STOPPED, exit code 0, output checked"},
                                     {"execution_stopped", true},
                                     {"outcome", "SUCCEEDED"}},
                                    {{"X-Runledger-Actor", "operator-kim"}});
  ASSERT_TRUE(IsStatus(released, 200));
  EXPECT_EQ(released.json.value("released", false), true);
  EXPECT_EQ(released.json.value("released_by", ""), "operator-kim");
  EXPECT_EQ(released.json.value("outcome", ""), "SUCCEEDED");
  EXPECT_EQ(job_view(client(), "j1").value("state", ""), "SUCCEEDED");
  g = gate();
  EXPECT_EQ(g.value("may_start", false), true) << g.dump();
  EXPECT_TRUE(g.at("reasons").empty()) << g.dump();
  ApiReply next = claim(client(), "w2", "k");
  ASSERT_TRUE(IsStatus(next, 200));
  EXPECT_EQ(next.json.at("job").value("id", ""), "j2");
}

TEST_F(HoldRecoveryTest, ARestartedWorkerReattachesAndTheOldTokenIsFenced) {
  const std::string old_token = running_job("ecs-task-7");

  ApiReply wrong = client().post(
      "/v1/jobs/j1/reattach",
      {{"worker", "w2"}, {"execution_handle", "ecs-task-8"}, {"observed", "running"}});
  EXPECT_TRUE(IsError(wrong, 409, "handle_mismatch"));
  ApiReply re = client().post("/v1/jobs/j1/reattach", {{"worker", "w2"},
                                                       {"execution_handle", "ecs-task-7"},
                                                       {"observed", "running"},
                                                       {"lease_s", kTestLeaseS}});
  ASSERT_TRUE(IsStatus(re, 200));
  const std::string token = token_of(re);
  EXPECT_EQ(token.size(), 32u) << re.body;
  EXPECT_NE(token, old_token);
  EXPECT_EQ(re.json.at("job").value("state", ""), "RUNNING");
  EXPECT_EQ(re.json.at("job").at("lease").value("worker", ""), "w2");
  EXPECT_EQ(re.json.at("job").value("attempt", 0), 1);  // the same work, not a new run
  // The lease's time is the job's, and the body is written as every reply
  // is (keys sorted, no spaces): the text writer's bytes are the tree's.
  EXPECT_EQ(re.json.value("lease_expires_at", ""),
            re.json.at("job").at("lease").value("expires_at", "-"));
  EXPECT_EQ(re.json.dump(), re.body);

  const size_t before = client().event_count();
  EXPECT_TRUE(IsError(worker_call(client(), "j1", "heartbeat", old_token), 409, "lease_mismatch"));
  EXPECT_TRUE(
      IsError(worker_call(client(), "j1", "steps/FETCH/start", old_token), 409, "lease_mismatch"));
  EXPECT_EQ(client().event_count(), before);
  ApiReply done = run_steps(client(), "j1", token, kDefaultPlan);
  ASSERT_TRUE(IsStatus(done, 200));
  EXPECT_EQ(done.json.value("state", ""), "SUCCEEDED");
}

TEST_F(HoldRecoveryTest, ReattachToAStaleAttemptReleasesItsHoldWithTheObservation) {
  const std::string token = running_job("ecs-task-9");
  ASSERT_TRUE(IsStatus(
      worker_call(client(), "j1", "outcome-unknown", token, {{"kind", "EXECUTION_STATE_UNKNOWN"}}),
      200));
  ASSERT_EQ(open_holds().size(), 1u);
  const std::string hold = open_holds().at(0).value("id", "");

  ApiReply re = client().post(
      "/v1/jobs/j1/reattach",
      {{"worker", "w2"}, {"execution_handle", "ecs-task-9"}, {"observed", "running"}});
  ASSERT_TRUE(IsStatus(re, 200));
  EXPECT_EQ(re.json.at("job").value("state", ""), "RUNNING");
  EXPECT_FALSE(token_of(re).empty()) << re.body;
  EXPECT_TRUE(open_holds().empty());
  EXPECT_EQ(client().get("/v1/holds/" + hold).json.value("released", false), true);
  // The target is busy again, now by a running attempt rather than a hold.
  json g = gate();
  EXPECT_EQ(g.value("may_start", true), false);
  ASSERT_EQ(g.at("reasons").size(), 1u) << g.dump();
  EXPECT_EQ(g.at("reasons").at(0).value("code", ""), "attempt_active");
}

TEST_F(HoldRecoveryTest, AnObservedExitResolvesTheStaleAttempt) {
  const std::string token = running_job("pid-4242");
  ASSERT_TRUE(IsStatus(
      worker_call(client(), "j1", "outcome-unknown", token, {{"kind", "EXECUTION_STATE_UNKNOWN"}}),
      200));

  ApiReply re = client().post("/v1/jobs/j1/reattach", {{"worker", "w2"},
                                                       {"execution_handle", "pid-4242"},
                                                       {"observed", "exited"},
                                                       {"exit_code", 3}});
  ASSERT_TRUE(IsStatus(re, 200));
  EXPECT_EQ(re.json.at("job").value("state", ""), "FAILED");
  EXPECT_TRUE(token_of(re).empty()) << re.body;
  EXPECT_TRUE(open_holds().empty());
  EXPECT_EQ(gate().value("may_start", false), true);
}

TEST_F(HoldRecoveryTest, AnOperatorHoldBlocksNewWorkUntilReleased) {
  ApiReply placed = client().post("/v1/holds", {{"target", kTarget},
                                                {"kind", "EXECUTION_STATE_UNKNOWN"},
                                                {"reason", "old container may still write"}});
  ASSERT_TRUE(IsStatus(placed, 201));
  const std::string hold = placed.json.value("id", "");
  EXPECT_EQ(placed.json.value("released", true), false);
  ASSERT_TRUE(IsStatus(enqueue(client(), "j1", kTarget, "k"), 201));

  EXPECT_EQ(claim(client(), "w1", "k").status, 204);
  EXPECT_EQ(job_view(client(), "j1").value("blocked_by", json()), json({{"hold", hold}}));
  EXPECT_EQ(gate().value("may_start", true), false);
  EXPECT_TRUE(IsError(client().post("/v1/holds/" + hold + "/release", {{"note", "looks fine"}}),
                      422, "invalid_field"));
  EXPECT_EQ(claim(client(), "w1", "k").status, 204);

  ASSERT_TRUE(IsStatus(client().post("/v1/holds/" + hold + "/release",
                                     {{"note", "container STOPPED"}, {"execution_stopped", true}}),
                       200));
  EXPECT_TRUE(IsError(client().post("/v1/holds/" + hold + "/release",
                                    {{"note", "again"}, {"execution_stopped", true}}),
                      409, "invalid_transition"));
  ApiReply next = claim(client(), "w1", "k");
  ASSERT_TRUE(IsStatus(next, 200));
  EXPECT_EQ(next.json.at("job").value("id", ""), "j1");
}

TEST_F(HoldRecoveryTest, AResultUnknownHoldNeedsRecoveryButDoesNotBlock) {
  const std::string token = running_job("ecs-task-1");
  ApiReply unknown =
      worker_call(client(), "j1", "outcome-unknown", token,
                  {{"kind", "RESULT_UNKNOWN"}, {"detail", "stopped; output unclear"}});
  ASSERT_TRUE(IsStatus(unknown, 200));
  EXPECT_EQ(unknown.json.value("state", ""), "STALE");
  const json holds = open_holds();
  ASSERT_EQ(holds.size(), 1u) << holds.dump();
  EXPECT_EQ(holds.at(0).value("kind", ""), "RESULT_UNKNOWN");

  EXPECT_EQ(gate().value("may_start", false), true);
  ASSERT_TRUE(IsStatus(enqueue(client(), "j2", kTarget, "k"), 201));
  ApiReply next = claim(client(), "w2", "k");
  ASSERT_TRUE(IsStatus(next, 200));
  EXPECT_EQ(next.json.at("job").value("id", ""), "j2");
  EXPECT_EQ(open_holds().size(), 1u);  // still listed as needing recovery
}

}  // namespace
}  // namespace runledger::testing

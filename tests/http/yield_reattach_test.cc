// Yield (docs/domain.md 1.9), a reattach's observed exit of one step (1.8) and the
// bounds of an execution_handle, end to end on a real server: the replies,
// the refusals that change nothing, and the worker that carries on.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "projections/job.h"
#include "tests/http/job_calls.h"
#include "tests/http/server_fixture.h"

namespace runledger::testing {
namespace {

using nlohmann::json;

// The handle every job of these tests is started with.
const std::string kStartedHandle = "ecs-task-42";

// The types of a job's events, in order.
std::vector<std::string> types_of_job_events(ApiClient& c, const std::string& job) {
  std::vector<std::string> out;
  ApiReply r = c.get("/v1/jobs/" + job + "/events");
  if (r.status != 200) return out;
  for (const auto& e : r.json.at("events")) out.push_back(e.value("type", ""));
  return out;
}

bool listed(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// Retries wait no time here, so a retry is claimable at once.
class YieldReattachTest : public ServerTest {
 protected:
  std::vector<std::string> initial_flags() const override { return {"--retry-backoff-s", "0"}; }

  // `id` enqueued, claimed by w1 and started with kStartedHandle: the lease token.
  std::string running(const std::string& id, const std::string& target = "t1") {
    EXPECT_TRUE(IsStatus(enqueue(client(), id, target, "k"), 201));
    ApiReply claimed = claim(client(), "w1", "k");
    EXPECT_TRUE(IsStatus(claimed, 200));
    EXPECT_EQ(claimed.json.value("job", json::object()).value("id", ""), id) << claimed.body;
    std::string token = token_of(claimed);
    EXPECT_TRUE(IsStatus(
        worker_call(client(), id, "start", token, {{"execution_handle", kStartedHandle}}), 200));
    return token;
  }
  ApiReply reattach(const std::string& id, json body) {
    json full = {{"worker", "w2"}, {"execution_handle", kStartedHandle}, {"lease_s", kTestLeaseS}};
    for (auto& [k, v] : body.items()) full[k] = v;
    return client().post("/v1/jobs/" + id + "/reattach", full);
  }
};

// ---- yield ----

TEST_F(YieldReattachTest, AYieldHandsTheAttemptBackAndTheNextWorkerResumesAfterItsSteps) {
  const std::string token = running("j1");
  ASSERT_TRUE(IsStatus(run_steps(client(), "j1", token, {"FETCH"}), 200));

  ApiReply y = worker_call(client(), "j1", "yield", token, {{"reason", "worker redeploy"}});
  ASSERT_TRUE(IsStatus(y, 200));
  EXPECT_EQ(y.json.value("state", ""), "QUEUED");
  EXPECT_EQ(y.json.value("attempt", 0), 2);
  EXPECT_EQ(y.json.value("client_token", ""), "j1-a2");
  EXPECT_TRUE(y.json.at("lease").is_null()) << y.body;
  ASSERT_EQ(y.json.at("attempts").size(), 2u) << y.body;
  EXPECT_EQ(y.json.at("attempts").at(0).value("state", ""), "YIELDED");
  EXPECT_EQ(step_state(y.json, "FETCH"), "REUSED");
  EXPECT_EQ(y.json.at("steps").at(0).value("reused_from", 0), 1);
  EXPECT_EQ(step_state(y.json, "VALIDATE"), "PENDING");
  EXPECT_TRUE(listed(types_of_job_events(client(), "j1"), "AttemptYielded"));

  // The yielding worker's token no longer works; the next worker gets the job at once.
  EXPECT_TRUE(IsError(worker_call(client(), "j1", "heartbeat", token), 409, "invalid_transition"));
  ApiReply next = claim(client(), "w2", "k");
  ASSERT_TRUE(IsStatus(next, 200));
  EXPECT_EQ(next.json.at("job").value("id", ""), "j1");
  const std::string token2 = token_of(next);
  EXPECT_TRUE(IsError(worker_call(client(), "j1", "heartbeat", token), 409, "lease_mismatch"));
  ASSERT_TRUE(IsStatus(worker_call(client(), "j1", "start", token2), 200));
  EXPECT_TRUE(
      IsError(worker_call(client(), "j1", "steps/FETCH/start", token2), 409, "invalid_transition"))
      << "a finished step is not run again";
  ApiReply done = run_steps(client(), "j1", token2, {"VALIDATE", "LOAD", "AGGREGATE"});
  ASSERT_TRUE(IsStatus(done, 200));
  EXPECT_EQ(done.json.value("state", ""), "SUCCEEDED");
}

TEST_F(YieldReattachTest, AYieldDoesNotCostAnAttempt) {
  ASSERT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k", {{"max_attempts", 1}}), 201));
  std::string token = token_of(claim(client(), "w1", "k"));
  ASSERT_TRUE(IsStatus(worker_call(client(), "j1", "start", token), 200));
  ApiReply y = worker_call(client(), "j1", "yield", token);
  ASSERT_TRUE(IsStatus(y, 200));
  EXPECT_EQ(y.json.value("state", ""), "QUEUED");
  EXPECT_EQ(y.json.value("attempt", 0), 2);
  EXPECT_EQ(client().get("/v1/jobs?state=YIELDED").status, 200) << "a state the list knows";
}

TEST_F(YieldReattachTest, AYieldIsRefusedWhileAStepRunsOrWithAnotherToken) {
  const std::string token = running("j1");
  ASSERT_TRUE(IsStatus(worker_call(client(), "j1", "steps/FETCH/start", token), 200));
  const size_t before = client().event_count();
  ApiReply busy = worker_call(client(), "j1", "yield", token);
  EXPECT_TRUE(IsError(busy, 409, "step_running"));
  EXPECT_EQ(busy.json.value("step", ""), "FETCH") << busy.body;
  EXPECT_TRUE(
      IsError(worker_call(client(), "j1", "yield", std::string(jobs::kLeaseTokenChars, 'a')), 409,
              "lease_mismatch"));
  ApiReply unknown = worker_call(client(), "j1", "yield", token, {{"why", "x"}});
  EXPECT_TRUE(IsError(unknown, 422, "unknown_field"));
  EXPECT_EQ(client().event_count(), before);
  EXPECT_EQ(job_view(client(), "j1").value("state", ""), "RUNNING");
}

TEST_F(YieldReattachTest, AYieldOfAnAttemptThatIsNotRunningIsAnInvalidTransition) {
  ASSERT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
  std::string token = token_of(claim(client(), "w1", "k"));
  ApiReply r = worker_call(client(), "j1", "yield", token);
  EXPECT_TRUE(IsError(r, 409, "invalid_transition"));
  EXPECT_EQ(r.json.value("state", ""), "LEASED");
  EXPECT_TRUE(r.json.at("allowed").is_array()) << r.body;
}

TEST_F(YieldReattachTest, AYieldWithACancelRequestedEndsTheAttemptCancelled) {
  const std::string token = running("j1");
  ASSERT_TRUE(IsStatus(client().post("/v1/jobs/j1/cancel", {{"reason", "wrong window"}}), 202));
  ApiReply y = worker_call(client(), "j1", "yield", token);
  ASSERT_TRUE(IsStatus(y, 200));
  EXPECT_EQ(y.json.value("state", ""), "CANCELLED");
  EXPECT_EQ(y.json.value("attempt", 0), 1);
  EXPECT_EQ(y.json.value("cancel_reason", ""), "wrong window");
}

// ---- reattach: an observed exit of one step ----

TEST_F(YieldReattachTest, AStepsExitZeroRunsTheAttemptOnUnderANewToken) {
  const std::string old_token = running("j1");
  ASSERT_TRUE(IsStatus(worker_call(client(), "j1", "steps/FETCH/start", old_token), 200));
  ApiReply re = reattach(
      "j1",
      {{"observed", "exited"}, {"step", "FETCH"}, {"exit_code", 0}, {"output", {{"rows", 7}}}});
  ASSERT_TRUE(IsStatus(re, 200));
  const std::string token = token_of(re);
  EXPECT_EQ(token.size(), jobs::kLeaseTokenChars) << re.body;
  EXPECT_NE(token, old_token);
  EXPECT_EQ(re.json.value("lease_expires_at", ""),
            re.json.at("job").at("lease").value("expires_at", "-"));
  EXPECT_EQ(re.json.dump(), re.body);
  const json& job = re.json.at("job");
  EXPECT_EQ(job.value("state", ""), "RUNNING");
  EXPECT_EQ(job.value("attempt", 0), 1);
  EXPECT_EQ(job.at("lease").value("worker", ""), "w2");
  EXPECT_EQ(step_state(job, "FETCH"), "DONE");
  EXPECT_EQ(job.at("steps").at(0).at("output"), json({{"rows", 7}}));

  EXPECT_TRUE(IsError(worker_call(client(), "j1", "steps/VALIDATE/start", old_token), 409,
                      "lease_mismatch"));
  ApiReply done = run_steps(client(), "j1", token, {"VALIDATE", "LOAD"});
  ASSERT_TRUE(IsStatus(done, 200));
  ASSERT_TRUE(IsStatus(worker_call(client(), "j1", "steps/AGGREGATE/start", token), 200));
  // The last step's exit 0 ends the attempt: no token in the reply.
  ApiReply last = reattach("j1", {{"observed", "exited"}, {"step", "AGGREGATE"}, {"exit_code", 0}});
  ASSERT_TRUE(IsStatus(last, 200));
  EXPECT_EQ(last.json.at("job").value("state", ""), "SUCCEEDED");
  EXPECT_FALSE(last.json.contains("lease_token")) << last.body;
}

TEST_F(YieldReattachTest, AStepsNonZeroExitFailsTheAttemptAndARetryFollowsTheRule) {
  const std::string token = running("j1");
  ASSERT_TRUE(IsStatus(run_steps(client(), "j1", token, {"FETCH"}), 200));
  ASSERT_TRUE(IsStatus(worker_call(client(), "j1", "steps/VALIDATE/start", token), 200));
  ApiReply re = reattach(
      "j1",
      {{"observed", "exited"}, {"step", "VALIDATE"}, {"exit_code", 137}, {"retryable", true}});
  ASSERT_TRUE(IsStatus(re, 200));
  EXPECT_FALSE(re.json.contains("lease_token")) << re.body;
  const json& job = re.json.at("job");
  EXPECT_EQ(job.value("state", ""), "QUEUED");
  EXPECT_EQ(job.value("attempt", 0), 2);
  EXPECT_EQ(job.at("attempts").at(0).value("state", ""), "FAILED");
  EXPECT_EQ(job.at("attempts").at(0).value("error", ""), "step VALIDATE exited with code 137");
  EXPECT_EQ(step_state(job, "FETCH"), "REUSED");
  const auto types = types_of_job_events(client(), "j1");
  EXPECT_TRUE(listed(types, "StepFailed"));
  EXPECT_TRUE(listed(types, "AttemptResolved"));
  EXPECT_TRUE(listed(types, "RetryScheduled"));
}

TEST_F(YieldReattachTest, AStaleAttemptsStepExitReleasesItsHold) {
  const std::string token = running("j1");
  ASSERT_TRUE(IsStatus(worker_call(client(), "j1", "steps/FETCH/start", token), 200));
  ASSERT_TRUE(IsStatus(
      worker_call(client(), "j1", "outcome-unknown", token, {{"kind", "EXECUTION_STATE_UNKNOWN"}}),
      200));
  ASSERT_EQ(client().get("/v1/holds?open=true").json.at("holds").size(), 1u);
  ApiReply re = reattach("j1", {{"observed", "exited"}, {"step", "FETCH"}, {"exit_code", 0}});
  ASSERT_TRUE(IsStatus(re, 200));
  EXPECT_EQ(re.json.at("job").value("state", ""), "RUNNING");
  EXPECT_FALSE(token_of(re).empty()) << re.body;
  EXPECT_TRUE(client().get("/v1/holds?open=true").json.at("holds").empty());
}

TEST_F(YieldReattachTest, AStepsExitIsCheckedAndARefusalChangesNothing) {
  const std::string token = running("j1");
  ASSERT_TRUE(IsStatus(worker_call(client(), "j1", "steps/FETCH/start", token), 200));
  const size_t before = client().event_count();
  ApiReply no_code = reattach("j1", {{"observed", "exited"}, {"step", "FETCH"}});
  EXPECT_TRUE(IsError(no_code, 422, "missing_field"));
  EXPECT_EQ(no_code.json.value("field", ""), "exit_code");
  ApiReply unknown_step =
      reattach("j1", {{"observed", "exited"}, {"step", "PUBLISH"}, {"exit_code", 0}});
  EXPECT_TRUE(IsError(unknown_step, 404, "step_not_found"));
  ApiReply not_running =
      reattach("j1", {{"observed", "exited"}, {"step", "LOAD"}, {"exit_code", 0}});
  EXPECT_TRUE(IsError(not_running, 409, "invalid_transition"));
  EXPECT_EQ(not_running.json.value("state", ""), "RUNNING");
  ApiReply step_running = reattach("j1", {{"observed", "running"}, {"step", "FETCH"}});
  EXPECT_TRUE(IsError(step_running, 422, "invalid_field"));
  EXPECT_EQ(step_running.json.value("field", ""), "step");
  ApiReply output_alone = reattach("j1", {{"observed", "exited"}, {"exit_code", 0}, {"output", 1}});
  EXPECT_TRUE(IsError(output_alone, 422, "invalid_field"));
  EXPECT_EQ(output_alone.json.value("field", ""), "output");
  EXPECT_EQ(client().event_count(), before);
  EXPECT_EQ(job_view(client(), "j1").value("state", ""), "RUNNING");
  // Without a step, an observed exit still resolves the whole execution.
  ApiReply whole = reattach("j1", {{"observed", "exited"}, {"exit_code", 0}});
  ASSERT_TRUE(IsStatus(whole, 200));
  EXPECT_EQ(whole.json.at("job").value("state", ""), "SUCCEEDED");
}

// ---- execution_handle ----

TEST_F(YieldReattachTest, AnExecutionHandleOutsideItsBoundsIs422WhereverItIsTaken) {
  ASSERT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
  const std::string token = token_of(claim(client(), "w1", "k"));
  const size_t before = client().event_count();
  for (const json& bad : {json(""), json(std::string(jobs::kExecutionHandleCharsMax + 1, 'a')),
                          json("line\nbreak"), json("caf\u00e9"), json(42)}) {
    ApiReply r = worker_call(client(), "j1", "start", token, {{"execution_handle", bad}});
    EXPECT_TRUE(IsError(r, 422, "invalid_field")) << bad.dump();
    EXPECT_EQ(r.json.value("field", ""), "execution_handle") << r.body;
  }
  ApiReply long_reattach =
      client().post("/v1/jobs/j1/reattach",
                    {{"worker", "w2"},
                     {"execution_handle", std::string(jobs::kExecutionHandleCharsMax + 1, 'a')},
                     {"observed", "running"}});
  EXPECT_TRUE(IsError(long_reattach, 422, "invalid_field"));
  EXPECT_EQ(long_reattach.json.value("field", ""), "execution_handle");
  EXPECT_EQ(client().event_count(), before);

  const std::string at_limit(jobs::kExecutionHandleCharsMax, '~');
  ApiReply ok = worker_call(client(), "j1", "start", token, {{"execution_handle", at_limit}});
  ASSERT_TRUE(IsStatus(ok, 200));
  EXPECT_EQ(ok.json.value("execution_handle", ""), at_limit);
}

}  // namespace
}  // namespace runledger::testing

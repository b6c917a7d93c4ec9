// The worker protocol end to end on a real server (docs/domain.md 1): enqueue,
// claim, heartbeat, start, steps, done; fencing by lease token; cancel at
// a step boundary; retry and rerun as new attempts; 204 when nothing is
// ready; one running attempt per target, the others waiting with
// `blocked_by`.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "projections/job.h"
#include "tests/http/job_calls.h"
#include "tests/http/server_fixture.h"

namespace runledger::testing {
namespace {

using nlohmann::json;

constexpr size_t kLeaseTokenChars = 32;

bool lower_hex(const std::string& s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::vector<std::string> event_types(ApiClient& c, const std::string& job) {
  std::vector<std::string> out;
  ApiReply r = c.get("/v1/jobs/" + job + "/events");
  if (r.status != 200) return out;
  for (const auto& e : r.json.at("events")) out.push_back(e.value("type", ""));
  return out;
}

// Retries wait no time here, so a retry is claimable at once.
class WorkerProtocolTest : public ServerTest {
 protected:
  std::vector<std::string> initial_flags() const override { return {"--retry-backoff-s", "0"}; }

  // Enqueues `id` and claims it; the lease token.
  std::string leased(const std::string& id, const std::string& target,
                     json extra = json::object()) {
    EXPECT_TRUE(IsStatus(enqueue(client(), id, target, "k", std::move(extra)), 201));
    ApiReply r = claim(client(), "w1", "k");
    EXPECT_TRUE(IsStatus(r, 200));
    EXPECT_EQ(r.json.value("job", json::object()).value("id", ""), id) << r.body;
    return token_of(r);
  }
  // Leased and started.
  std::string running(const std::string& id, const std::string& target,
                      json extra = json::object()) {
    std::string token = leased(id, target, std::move(extra));
    EXPECT_TRUE(IsStatus(worker_call(client(), id, "start", token), 200));
    return token;
  }
};

TEST_F(WorkerProtocolTest, AJobRunsFromEnqueueToSucceeded) {
  ApiReply queued = enqueue(client(), "j1", "shop-a/orders", "k",
                            {{"input", {{"shop", "A"}, {"from", "2026-05-06T00:00:00Z"}}}});
  ASSERT_TRUE(IsStatus(queued, 201));
  EXPECT_EQ(queued.json.value("state", ""), "QUEUED");
  EXPECT_EQ(queued.json.value("plan", json()), json(kDefaultPlan));
  EXPECT_EQ(queued.json.value("reuse_on_rerun", json()), json({"FETCH"}));
  EXPECT_EQ(queued.json.value("max_attempts", 0), 3);
  EXPECT_EQ(queued.json.value("client_token", ""), "j1-a1");
  EXPECT_EQ(queued.json.value("input", json()).value("shop", ""), "A");

  ApiReply claimed = claim(client(), "w1", "k");
  ASSERT_TRUE(IsStatus(claimed, 200));
  const std::string token = token_of(claimed);
  EXPECT_EQ(token.size(), kLeaseTokenChars);
  EXPECT_TRUE(lower_hex(token)) << token;
  EXPECT_FALSE(claimed.json.value("lease_expires_at", "").empty()) << claimed.body;
  EXPECT_EQ(claimed.json.value("lease_expires_at", ""),
            claimed.json.at("job").at("lease").value("expires_at", "-"));
  // Written as every reply is (keys sorted, no spaces), though not through
  // a JSON tree: the same bytes.
  EXPECT_EQ(claimed.json.dump(), claimed.body);
  EXPECT_EQ(queued.json.dump(), queued.body);
  const json& job = claimed.json.at("job");
  EXPECT_EQ(job.value("state", ""), "LEASED");
  EXPECT_EQ(job.at("lease").value("worker", ""), "w1");
  // The token goes to the worker that claimed, and nowhere else.
  EXPECT_EQ(job.dump().find(token), std::string::npos);
  EXPECT_EQ(client().get("/v1/jobs/j1").body.find(token), std::string::npos);

  ApiReply beat = worker_call(client(), "j1", "heartbeat", token);
  ASSERT_TRUE(IsStatus(beat, 200));
  EXPECT_FALSE(beat.json.value("lease_expires_at", "").empty());
  EXPECT_EQ(beat.json.value("cancel_requested", true), false);

  ApiReply started = worker_call(client(), "j1", "start", token, {{"execution_handle", "ecs-1"}});
  ASSERT_TRUE(IsStatus(started, 200));
  EXPECT_EQ(started.json.value("state", ""), "RUNNING");
  EXPECT_EQ(started.json.value("execution_handle", ""), "ecs-1");

  for (size_t i = 0; i < kDefaultPlan.size(); ++i) {
    const std::string& step = kDefaultPlan[i];
    ApiReply s = worker_call(client(), "j1", "steps/" + step + "/start", token);
    ASSERT_TRUE(IsStatus(s, 200));
    EXPECT_EQ(step_state(s.json, step), "RUNNING");
    ApiReply d = worker_call(client(), "j1", "steps/" + step + "/done", token,
                             {{"output", {{"rows", i * 10}}}});
    ASSERT_TRUE(IsStatus(d, 200));
    EXPECT_EQ(step_state(d.json, step), "DONE");
  }

  json done = job_view(client(), "j1");
  EXPECT_EQ(done.value("state", ""), "SUCCEEDED");
  EXPECT_EQ(done.value("last_completed_step", ""), "AGGREGATE");
  EXPECT_EQ(done.at("steps").at(2).at("output").value("rows", -1), 20);
  EXPECT_EQ(done.at("attempts").size(), 1u);
  EXPECT_EQ(done.at("attempts").at(0).value("state", ""), "SUCCEEDED");
  EXPECT_EQ(event_types(client(), "j1"),
            (std::vector<std::string>{"JobEnqueued", "JobLeased", "LeaseRenewed", "JobStarted",
                                      "StepStarted", "StepSucceeded", "StepStarted",
                                      "StepSucceeded", "StepStarted", "StepSucceeded",
                                      "StepStarted", "StepSucceeded", "AttemptSucceeded"}));
  // The audit feed never holds the token in clear.
  for (const auto& e : client().all_events()) EXPECT_EQ(e.dump().find(token), std::string::npos);
}

// An event's data shows the client's JSON as JSON (input, output), and a
// time that was not given as null, not as the epoch.
TEST_F(WorkerProtocolTest, EventDataHoldsInputAndOutputAsJsonAndNoTimeAsNull) {
  const std::string token = running("j1", "t1", {{"input", {{"rows", {1, 2}}}}});
  ASSERT_TRUE(IsStatus(worker_call(client(), "j1", "steps/FETCH/start", token), 200));
  ASSERT_TRUE(IsStatus(
      worker_call(client(), "j1", "steps/FETCH/done", token, {{"output", {{"n", 1}}}}), 200));
  ASSERT_TRUE(IsStatus(worker_call(client(), "j1", "steps/VALIDATE/start", token), 200));
  ASSERT_TRUE(IsStatus(worker_call(client(), "j1", "steps/VALIDATE/done", token), 200));
  ASSERT_TRUE(IsStatus(
      enqueue(client(), "j2", "t2", "later", {{"not_before", "2030-01-02T03:04:05.000Z"}}), 201));

  const json events = client().get("/v1/jobs/j1/events").json.at("events");
  ASSERT_GE(events.size(), 7u) << events.dump();
  const json& enqueued = events.at(0).at("data");
  EXPECT_EQ(enqueued.at("input"), json({{"rows", {1, 2}}})) << enqueued.dump();
  EXPECT_TRUE(enqueued.at("not_before").is_null()) << enqueued.dump();
  std::vector<json> outputs;
  for (const auto& e : events) {
    // No output given: no `output` in the data.
    if (e.value("type", "") == "StepSucceeded")
      outputs.push_back(e.at("data").value("output", json()));
  }
  EXPECT_EQ(outputs, (std::vector<json>{json{{"n", 1}}, json(nullptr)}));
  const json later = client().get("/v1/jobs/j2/events").json.at("events").at(0).at("data");
  EXPECT_EQ(later.value("not_before", ""), "2030-01-02T03:04:05.000Z") << later.dump();
}

TEST_F(WorkerProtocolTest, ClaimWithNothingReadyIs204AndWritesNothing) {
  ApiReply empty = claim(client(), "w1", "k");
  EXPECT_EQ(empty.status, 204);
  EXPECT_TRUE(empty.body.empty()) << empty.body;

  ASSERT_TRUE(IsStatus(enqueue(client(), "other-kind", "t1", "other"), 201));
  ASSERT_TRUE(IsStatus(
      enqueue(client(), "later", "t2", "k", {{"not_before", "2999-01-01T00:00:00Z"}}), 201));
  const size_t before = client().event_count();
  EXPECT_EQ(claim(client(), "w1", "k").status, 204);
  EXPECT_EQ(client().event_count(), before);
  EXPECT_EQ(job_view(client(), "later").value("state", ""), "QUEUED");
}

TEST_F(WorkerProtocolTest, HigherPriorityIsClaimedFirstThenEnqueueOrder) {
  ASSERT_TRUE(IsStatus(enqueue(client(), "first", "t1", "k"), 201));
  ASSERT_TRUE(IsStatus(enqueue(client(), "second", "t2", "k"), 201));
  ASSERT_TRUE(IsStatus(enqueue(client(), "urgent", "t3", "k", {{"priority", 5}}), 201));

  std::vector<std::string> order;
  for (int i = 0; i < 3; ++i) {
    ApiReply r = claim(client(), "w1", "k");
    ASSERT_TRUE(IsStatus(r, 200));
    order.push_back(r.json.at("job").value("id", ""));
  }
  EXPECT_EQ(order, (std::vector<std::string>{"urgent", "first", "second"}));
}

TEST_F(WorkerProtocolTest, AnOldLeaseTokenIsFencedOff) {
  const std::string old_token = leased("j1", "t1");
  ASSERT_TRUE(IsStatus(worker_call(client(), "j1", "release", old_token), 200));
  ApiReply again = claim(client(), "w2", "k");
  ASSERT_TRUE(IsStatus(again, 200));
  const std::string token = token_of(again);
  ASSERT_NE(token, old_token);
  const size_t before = client().event_count();

  EXPECT_TRUE(IsError(worker_call(client(), "j1", "start", old_token), 409, "lease_mismatch"));
  EXPECT_TRUE(IsError(worker_call(client(), "j1", "heartbeat", old_token), 409, "lease_mismatch"));
  EXPECT_EQ(client().event_count(), before);
  EXPECT_EQ(job_view(client(), "j1").value("state", ""), "LEASED");

  ASSERT_TRUE(IsStatus(worker_call(client(), "j1", "start", token), 200));
  EXPECT_TRUE(
      IsError(worker_call(client(), "j1", "steps/FETCH/start", old_token), 409, "lease_mismatch"));
  EXPECT_EQ(step_state(job_view(client(), "j1"), "FETCH"), "PENDING");
}

TEST_F(WorkerProtocolTest, CancelIsHonouredAtTheNextStepBoundary) {
  const std::string token = running("j1", "t1");
  ASSERT_TRUE(IsStatus(worker_call(client(), "j1", "steps/FETCH/start", token), 200));

  ApiReply cancel = client().post("/v1/jobs/j1/cancel", {{"reason", "operator stop"}});
  ASSERT_TRUE(IsStatus(cancel, 202));
  EXPECT_EQ(cancel.json.value("state", ""), "RUNNING");  // requested is not cancelled
  EXPECT_EQ(cancel.json.value("cancel_requested", false), true);
  EXPECT_EQ(cancel.json.value("cancel_reason", ""), "operator stop");
  ApiReply beat = worker_call(client(), "j1", "heartbeat", token);
  ASSERT_TRUE(IsStatus(beat, 200));
  EXPECT_EQ(beat.json.value("cancel_requested", false), true);

  ApiReply done = worker_call(client(), "j1", "steps/FETCH/done", token);
  ASSERT_TRUE(IsStatus(done, 200));
  EXPECT_EQ(done.json.value("state", ""), "CANCELLED");
  EXPECT_EQ(done.json.value("last_completed_step", ""), "FETCH");
  EXPECT_EQ(done.json.value("cleanup_needed", false), true);
  const size_t before = client().event_count();
  ApiReply next = worker_call(client(), "j1", "steps/VALIDATE/start", token);
  EXPECT_EQ(next.status, 409) << next.body;
  EXPECT_EQ(client().event_count(), before);
  EXPECT_EQ(step_state(job_view(client(), "j1"), "VALIDATE"), "PENDING");
}

TEST_F(WorkerProtocolTest, CancelBeforeTheStartMakesTheStart409Cancelled) {
  const std::string token = leased("j1", "t1");
  ApiReply cancel = client().post("/v1/jobs/j1/cancel", json::object());
  ASSERT_TRUE(IsStatus(cancel, 202));
  EXPECT_EQ(cancel.json.value("state", ""), "LEASED");

  ApiReply start = worker_call(client(), "j1", "start", token);
  EXPECT_TRUE(IsError(start, 409, "cancelled"));
  // No reason was given: null, as the job's view shows it.
  ASSERT_TRUE(start.json.contains("cancel_reason")) << start.body;
  EXPECT_TRUE(start.json.at("cancel_reason").is_null()) << start.body;

  json job = job_view(client(), "j1");
  EXPECT_EQ(job.value("state", ""), "CANCELLED");
  EXPECT_EQ(job.value("cleanup_needed", true), false);
  EXPECT_TRUE(job.at("cancel_reason").is_null());
}

TEST_F(WorkerProtocolTest, CancelBetweenStepsMakesTheNextStepStart409Cancelled) {
  const std::string token = running("j1", "t1");
  ASSERT_TRUE(IsStatus(run_steps(client(), "j1", token, {"FETCH"}), 200));
  ASSERT_TRUE(IsStatus(client().post("/v1/jobs/j1/cancel", {{"reason", "wrong window"}}), 202));

  ApiReply next = worker_call(client(), "j1", "steps/VALIDATE/start", token);
  EXPECT_TRUE(IsError(next, 409, "cancelled"));
  EXPECT_EQ(next.json.value("cancel_reason", json()), "wrong window") << next.body;

  json job = job_view(client(), "j1");
  EXPECT_EQ(job.value("state", ""), "CANCELLED");
  EXPECT_EQ(job.value("last_completed_step", ""), "FETCH");
  EXPECT_EQ(step_state(job, "VALIDATE"), "PENDING");
}

TEST_F(WorkerProtocolTest, CancelAcknowledgedByTheWorkerEndsTheAttempt) {
  const std::string token = running("j1", "t1");
  ASSERT_TRUE(IsStatus(client().post("/v1/jobs/j1/cancel", json::object()), 202));
  ApiReply ack = worker_call(client(), "j1", "cancel-ack", token);
  ASSERT_TRUE(IsStatus(ack, 200));
  EXPECT_EQ(ack.json.value("state", ""), "CANCELLED");
}

TEST_F(WorkerProtocolTest, CancelOfAQueuedJobIsImmediate) {
  ASSERT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
  ApiReply cancel = client().post("/v1/jobs/j1/cancel", json::object());
  ASSERT_TRUE(IsStatus(cancel, 202));
  EXPECT_EQ(cancel.json.value("state", ""), "CANCELLED");
  EXPECT_EQ(claim(client(), "w1", "k").status, 204);
}

TEST_F(WorkerProtocolTest, RetryableFailureEnqueuesANewAttemptThatReusesDoneSteps) {
  const std::string token = running("j1", "t1", {{"max_attempts", 2}});
  ASSERT_TRUE(IsStatus(run_steps(client(), "j1", token, {"FETCH"}), 200));
  ASSERT_TRUE(IsStatus(worker_call(client(), "j1", "steps/VALIDATE/start", token), 200));

  ApiReply failed = worker_call(client(), "j1", "steps/VALIDATE/failed", token,
                                {{"error", "schema drift"}, {"retryable", true}});
  ASSERT_TRUE(IsStatus(failed, 200));

  json job = job_view(client(), "j1");
  EXPECT_EQ(job.value("attempt", 0), 2);
  EXPECT_EQ(job.value("state", ""), "QUEUED");
  EXPECT_EQ(job.at("attempts").at(0).value("state", ""), "FAILED");
  EXPECT_NE(job.at("attempts").at(0).value("error", "").find("schema drift"), std::string::npos)
      << job.dump();
  EXPECT_EQ(step_state(job, "FETCH"), "REUSED");
  EXPECT_EQ(job.at("steps").at(0).value("reused_from", 0), 1);
  EXPECT_EQ(step_state(job, "VALIDATE"), "PENDING");

  ApiReply again = claim(client(), "w2", "k");
  ASSERT_TRUE(IsStatus(again, 200));
  const std::string token2 = token_of(again);
  EXPECT_EQ(again.json.at("job").value("client_token", ""), "j1-a2");
  ASSERT_TRUE(IsStatus(worker_call(client(), "j1", "start", token2), 200));
  EXPECT_EQ(worker_call(client(), "j1", "steps/FETCH/start", token2).status, 409);
  ApiReply rest = run_steps(client(), "j1", token2, {"VALIDATE", "LOAD", "AGGREGATE"});
  ASSERT_TRUE(IsStatus(rest, 200));
  EXPECT_EQ(rest.json.value("state", ""), "SUCCEEDED");
  EXPECT_EQ(rest.json.at("attempts").at(0).value("state", ""), "FAILED");  // history stays
}

TEST_F(WorkerProtocolTest, FailureWithoutAttemptsLeftIsFinal) {
  const std::string token = running("j1", "t1", {{"max_attempts", 1}});
  ASSERT_TRUE(IsStatus(worker_call(client(), "j1", "steps/FETCH/start", token), 200));

  ApiReply failed = worker_call(client(), "j1", "steps/FETCH/failed", token,
                                {{"error", "source gone"}, {"retryable", true}});
  ASSERT_TRUE(IsStatus(failed, 200));

  EXPECT_EQ(failed.json.value("state", ""), "FAILED");
  EXPECT_EQ(failed.json.value("attempt", 0), 1);
  EXPECT_EQ(claim(client(), "w1", "k").status, 204);
}

// A worker's failure text may be a long stack trace: it is kept, cut to
// jobs::kErrorBytesMax, never refused (as a connector's last_error is cut).
TEST_F(WorkerProtocolTest, ALongFailureTextIsStoredCutNotRefused) {
  const std::string trace(900'000, 't');  // within the 1 MiB body limit
  const std::string token = running("j1", "t1", {{"max_attempts", 1}});
  ASSERT_TRUE(IsStatus(worker_call(client(), "j1", "steps/FETCH/start", token), 200));
  ApiReply failed =
      worker_call(client(), "j1", "steps/FETCH/failed", token, {{"error", "boom: " + trace}});
  ASSERT_TRUE(IsStatus(failed, 200));
  const std::string kept = failed.json.at("steps").at(0).value("error", "");
  EXPECT_EQ(kept.size(), jobs::kErrorBytesMax);
  EXPECT_EQ(kept.rfind("boom: ttt", 0), 0u) << kept.substr(0, 40);

  const std::string token2 = running("j2", "t2");
  ApiReply stale = worker_call(client(), "j2", "outcome-unknown", token2,
                               {{"kind", "RESULT_UNKNOWN"}, {"detail", trace}});
  ASSERT_TRUE(IsStatus(stale, 200));
  EXPECT_EQ(stale.json.value("state", ""), "STALE");
}

TEST_F(WorkerProtocolTest, RerunOfAFinishedJobStartsANewAttemptReusingFetch) {
  const std::string token = running("j1", "t1");
  ASSERT_TRUE(IsStatus(run_steps(client(), "j1", token, kDefaultPlan), 200));
  ASSERT_EQ(job_view(client(), "j1").value("state", ""), "SUCCEEDED");

  ApiReply rerun = client().post("/v1/jobs/j1/rerun", {{"reason", "inputs corrected"}});
  ASSERT_TRUE(IsStatus(rerun, 201));
  EXPECT_EQ(rerun.json.value("attempt", 0), 2);
  EXPECT_EQ(rerun.json.value("state", ""), "QUEUED");
  EXPECT_EQ(step_state(rerun.json, "FETCH"), "REUSED");
  for (const char* s : {"VALIDATE", "LOAD", "AGGREGATE"}) {
    EXPECT_EQ(step_state(rerun.json, s), "PENDING") << s;
  }
  EXPECT_EQ(rerun.json.at("attempts").at(0).value("state", ""), "SUCCEEDED");

  // A rerun never starts new work while the earlier one may still run.
  EXPECT_TRUE(
      IsError(client().post("/v1/jobs/j1/rerun", json::object()), 409, "invalid_transition"));
  ApiReply again = claim(client(), "w1", "k");
  ASSERT_TRUE(IsStatus(again, 200));
  const std::string token2 = token_of(again);
  ASSERT_TRUE(IsStatus(worker_call(client(), "j1", "start", token2), 200));
  EXPECT_TRUE(IsStatus(run_steps(client(), "j1", token2, {"VALIDATE", "LOAD", "AGGREGATE"}), 200));
}

TEST_F(WorkerProtocolTest, ASecondJobOnTheSameTargetWaitsWithBlockedBy) {
  const std::string token = leased("j1", "table-orders");
  ASSERT_TRUE(IsStatus(enqueue(client(), "j2", "table-orders", "k"), 201));
  ASSERT_TRUE(IsStatus(enqueue(client(), "j3", "table-users", "k"), 201));

  // j2 is never handed out while j1 holds the target; j3 runs in parallel.
  ApiReply other = claim(client(), "w2", "k");
  ASSERT_TRUE(IsStatus(other, 200));
  EXPECT_EQ(other.json.at("job").value("id", ""), "j3");
  EXPECT_EQ(claim(client(), "w3", "k").status, 204);
  json waiting = job_view(client(), "j2");
  EXPECT_EQ(waiting.value("state", ""), "QUEUED");
  EXPECT_EQ(waiting.value("blocked_by", json()), json({{"job", "j1"}}));
  ApiReply gate = client().get("/v1/targets/table-orders/gate");
  ASSERT_TRUE(IsStatus(gate, 200));
  EXPECT_EQ(gate.json.value("may_start", true), false);
  ASSERT_EQ(gate.json.at("reasons").size(), 1u) << gate.body;
  EXPECT_EQ(gate.json.at("reasons").at(0).value("code", ""), "attempt_active");
  EXPECT_EQ(gate.json.at("reasons").at(0).value("job", ""), "j1");

  ASSERT_TRUE(IsStatus(worker_call(client(), "j1", "start", token), 200));
  ASSERT_TRUE(IsStatus(run_steps(client(), "j1", token, kDefaultPlan), 200));

  EXPECT_TRUE(job_view(client(), "j2").at("blocked_by").is_null());
  ApiReply next = claim(client(), "w3", "k");
  ASSERT_TRUE(IsStatus(next, 200));
  EXPECT_EQ(next.json.at("job").value("id", ""), "j2");
}

}  // namespace
}  // namespace runledger::testing

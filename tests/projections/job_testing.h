// Fixture of the job model tests: a Given harness with a worker's view of
// the leases it holds, command helpers that read as the scenario steps, and
// an independent replay of the stored bytes.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "events/event_codec.h"
#include "http/rejection_status.h"
#include "projections/state.h"
#include "tests/projections/decider_testing.h"

namespace runledger::job_tests {

using jobs::AttemptState;
using jobs::StepState;
using Types = std::vector<std::string>;

inline constexpr int64_t kMsPerS = 1000;

using testing::expect_accepted;
using testing::expect_refused;
using testing::replay;

// Then: refused as a transition the state does not allow.
inline void expect_invalid_transition(const Decision& d, AttemptState state) {
  expect_refused(d, 409, "invalid_transition");
  if (!d.rejection) return;
  EXPECT_EQ(d.rejection->extra.value("state", ""), jobs::to_string(state));
  EXPECT_TRUE(d.rejection->extra.contains("allowed"));
  EXPECT_NE(d.rejection->message.find(jobs::to_string(state)), std::string::npos)
      << d.rejection->message;
}

// The ready queue as job ids in claim order (ReadyKey has no ==).
inline std::vector<std::string> ready_ids(const jobs::JobsState& js) {
  std::vector<std::string> out;
  for (const auto& k : js.ready) out.push_back(k.job_id);
  return out;
}

class JobTest : public ::testing::Test {
 protected:
  runledger::testing::Given g;
  // The lease token each job's worker holds (the last one handed out).
  std::map<std::string, std::string> token;

  static jobs::Enqueue job(const std::string& id, const std::string& target = "t1") {
    jobs::Enqueue c;
    c.id = id;
    c.kind = "load";
    c.target = target;
    c.input = R"({"shop":"A","from":"2026-05-06T00:00:00Z"})";
    return c;
  }

  Decision enqueue(const jobs::Enqueue& c) {
    Decision d = g.run(c);
    expect_accepted(d);
    return d;
  }
  Decision enqueue(const std::string& id, const std::string& target = "t1") {
    return enqueue(job(id, target));
  }

  std::string fresh_token() { return "tok" + std::to_string(++tokens_made_) + "-secret"; }

  // Claims as `worker`: the id of the job handed out, "" when none.
  std::string claim(const std::string& worker = "w1", std::vector<std::string> kinds = {},
                    std::optional<int64_t> lease_s = std::nullopt) {
    jobs::Claim c{worker, std::move(kinds), lease_s, fresh_token()};
    Decision d = g.run(c);
    expect_accepted(d);
    if (d.events.empty()) return "";
    std::string id = d.body.value("job", "");
    token[id] = c.lease_token;
    return id;
  }

  Decision start(const std::string& id) { return g.run(jobs::Start{id, token[id], handle(id)}); }
  static std::string handle(const std::string& id) { return "ecs-task-" + id; }
  Decision step_start(const std::string& id, const std::string& step) {
    return g.run(jobs::StepStart{id, step, token[id]});
  }
  Decision step_done(const std::string& id, const std::string& step,
                     const std::string& output = "") {
    return g.run(jobs::StepDone{id, step, token[id], output});
  }
  Decision step_fail(const std::string& id, const std::string& step, bool retryable,
                     const std::string& error = "connection reset") {
    return g.run(jobs::StepFail{id, step, token[id], error, retryable});
  }
  Decision cancel(const std::string& id, const std::string& reason = "wrong input window") {
    return g.run(jobs::Cancel{id, reason});
  }
  Decision cancel_ack(const std::string& id) { return g.run(jobs::CancelAck{id, token[id]}); }
  Decision heartbeat(const std::string& id, std::optional<int64_t> lease_s = std::nullopt) {
    return g.run(jobs::Heartbeat{id, token[id], lease_s});
  }
  Decision release(const std::string& id) { return g.run(jobs::Release{id, token[id]}); }
  Decision outcome_unknown(const std::string& id, const std::string& kind) {
    return g.run(jobs::OutcomeUnknown{id, token[id], kind, "submission reply lost"});
  }
  Decision rerun(const std::string& id) { return g.run(jobs::Rerun{id, "backfill fix"}); }
  Decision expire() { return g.run(jobs::ExpireLeases{}); }
  // Reattach observing the execution running; the new token becomes the worker's.
  Decision reattach_running(const std::string& id, const std::string& worker = "w2") {
    jobs::Reattach c{id, worker, handle(id), "running", std::nullopt, std::nullopt, fresh_token()};
    Decision d = g.run(c);
    if (!d.rejection) token[id] = c.lease_token;
    return d;
  }
  Decision reattach_exited(const std::string& id, int exit_code) {
    return g.run(jobs::Reattach{id, "w2", handle(id), "exited", exit_code, std::nullopt, ""});
  }
  // Reattach observing one step's exit (docs/domain.md 1.8). When the attempt runs
  // on, the command's fresh token becomes the worker's.
  jobs::Reattach step_exit(const std::string& id, const std::string& step, int exit_code) {
    jobs::Reattach c{id, "w2", handle(id), "exited", exit_code, std::nullopt, fresh_token()};
    c.step = step;
    return c;
  }
  Decision reattach_step(const jobs::Reattach& c) {
    Decision d = g.run(c);
    if (!d.rejection && g.state.jobs.by_id.count(c.job_id) &&
        state_of(c.job_id) == AttemptState::kRunning) {
      token[c.job_id] = c.lease_token;
    }
    return d;
  }
  Decision reattach_step(const std::string& id, const std::string& step, int exit_code) {
    return reattach_step(step_exit(id, step, exit_code));
  }
  Decision yield(const std::string& id, const std::string& reason = "worker redeploy") {
    return g.run(jobs::Yield{id, token[id], reason});
  }

  // Given a job enqueued, claimed and started: its attempt is RUNNING.
  void given_running(const std::string& id, const std::string& target = "t1") {
    if (!g.state.jobs.by_id.count(id)) enqueue(id, target);
    ASSERT_EQ(claim(), id);
    expect_accepted(start(id));
    ASSERT_EQ(state_of(id), AttemptState::kRunning);
  }
  // Runs the steps of the plan from `from` (index) to the end.
  void run_steps(const std::string& id, size_t from = 0) {
    const auto& plan = job_of(id).plan;
    for (size_t i = from; i < plan.size(); ++i) {
      expect_accepted(step_start(id, plan[i]));
      expect_accepted(step_done(id, plan[i], R"({"rows":)" + std::to_string(i + 1) + "}"));
    }
  }
  void given_succeeded(const std::string& id, const std::string& target = "t1") {
    given_running(id, target);
    run_steps(id);
    ASSERT_EQ(state_of(id), AttemptState::kSucceeded);
  }
  void given_failed(const std::string& id, const std::string& target = "t1") {
    given_running(id, target);
    expect_accepted(step_start(id, "FETCH"));
    expect_accepted(step_fail(id, "FETCH", false));
    ASSERT_EQ(state_of(id), AttemptState::kFailed);
  }
  void given_cancelled(const std::string& id, const std::string& target = "t1") {
    enqueue(id, target);
    expect_accepted(cancel(id));
    ASSERT_EQ(state_of(id), AttemptState::kCancelled);
  }
  // Given a RUNNING attempt whose lease ran out: STALE, with a blocking hold.
  void given_stale(const std::string& id, const std::string& target = "t1") {
    given_running(id, target);
    advance_s(g.policy.lease_default_s);
    expect_accepted(expire());
    ASSERT_EQ(state_of(id), AttemptState::kStale);
  }

  const jobs::Job& job_of(const std::string& id) { return g.state.jobs.by_id.at(id); }
  AttemptState state_of(const std::string& id) { return job_of(id).latest().state; }
  nlohmann::json view_of(const std::string& id) { return jobs::view(g.state, job_of(id)); }
  std::string snapshot_of(const std::string& id) { return jobs::to_json(job_of(id)).dump(); }
  void advance_s(int64_t s) { g.now_ms += s * kMsPerS; }
  const holds::Hold& hold(const std::string& id) { return g.state.holds.by_id.at(id); }

 private:
  int tokens_made_ = 0;
};

}  // namespace runledger::job_tests

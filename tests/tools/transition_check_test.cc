// check_transition(): every event the deciders emit is an allowed transition
// from the state before it, and events that break a rule of docs/domain.md are
// refused with the rule they break.
#include "projections/transition_check.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "events/event_codec.h"
#include "projections/job_commands.h"
#include "projections/stream_name.h"
#include "tests/support/test_support.h"

namespace runledger::testing {
namespace {

constexpr int64_t kMsPerS = 1000;

class Transitions : public ::testing::Test {
 protected:
  // Decides `c` against the state, then checks each event it emits against
  // the state before that event (a shadow fold) and folds it: the first
  // refusal, or OK. A job event must also leave its attempt in a state its
  // rule names (jobs::detail::kEventRules), or the fold and the table differ.
  template <typename Cmd>
  Status run(const Cmd& c) {
    Decision d = decide(g_.state, c, g_.ctx());
    for (const auto& bytes : g_.apply(d)) {
      const fb::Event* e = nullptr;
      if (Status s = decode_event(bytes, &e); !s.ok()) return s;
      if (Status s = check_transition(shadow_, *e); !s.ok()) return s;
      const std::optional<jobs::AttemptState> before = latest_state(*e);
      evolve(shadow_, *e);
      if (Status s = left_as_its_rule_says(*e, before); !s.ok()) return s;
    }
    return Status::Ok();
  }
  // The state of the latest attempt of the job `e` is about to change (in
  // the shadow), if it is a job event of a job that exists.
  std::optional<jobs::AttemptState> latest_state(const fb::Event& e) const {
    const std::optional<StreamName> name = parse_stream(e.stream()->string_view());
    if (!name || name->kind != StreamKind::kJob) return std::nullopt;
    auto it = shadow_.jobs.by_id.find(std::string(name->id));
    if (it == shadow_.jobs.by_id.end() || it->second.attempts.empty()) return std::nullopt;
    return it->second.latest().state;
  }
  Status left_as_its_rule_says(const fb::Event& e, std::optional<jobs::AttemptState> before) const {
    const jobs::detail::EventRule* rule = jobs::detail::event_rule(e.payload_type());
    if (rule == nullptr) return Status::Ok();  // not a job event
    const std::optional<jobs::AttemptState> after = latest_state(e);
    if (!after) return Status::Invalid("a job event left no attempt");
    const bool as_said = rule->to == jobs::detail::kUnchanged
                             ? before == after
                             : (rule->to & jobs::detail::state_bit(*after)) != 0;
    if (as_said) return Status::Ok();
    return Status::Invalid(std::string(fb::EnumNamePayload(e.payload_type())) + " left attempt " +
                           jobs::to_string(*after) + ", not where its EventRule says");
  }
  // Runs `c` and expects its events allowed.
  template <typename Cmd>
  void allowed(const Cmd& c) {
    Status s = run(c);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  // Checks one forged event on `stream` against the current state.
  template <typename T>
  Status forged(const std::string& stream, T table) {
    fb::PayloadUnion payload;
    payload.Set(std::move(table));
    EventDraft d;
    d.seq = g_.state.last_seq + 1;
    d.stream = stream;
    d.stream_version = 1;
    d.recorded_at_ms = g_.now_ms;
    d.actor = "forger";
    d.command_id = "forged";
    d.prev_hash = g_.state.last_hash;
    d.payload = &payload;
    std::string bytes;
    encode_event(d, &bytes);
    const fb::Event* e = nullptr;
    if (Status s = decode_event(bytes, &e); !s.ok()) return s;
    return check_transition(g_.state, *e);
  }
  // Expects the forged event refused at its seq, the message naming `why`.
  template <typename T>
  void refused(const std::string& stream, T table, const std::string& why) {
    Status s = forged(stream, std::move(table));
    ASSERT_EQ(s.code(), Status::Code::kCorruption) << "allowed: " << why;
    EXPECT_EQ(s.seq(), g_.state.last_seq + 1);
    EXPECT_NE(s.message().find(why), std::string::npos) << s.message();
  }

  void advance_s(int64_t s) { g_.now_ms += s * kMsPerS; }

  static jobs::Enqueue job(const std::string& id, const std::string& target) {
    jobs::Enqueue e;
    e.id = id;
    e.kind = "load";
    e.target = target;
    e.plan = {"A", "B"};
    e.reuse_on_rerun = {"A"};
    return e;
  }
  static jobs::Claim claim(const std::string& worker, const std::string& token,
                           int64_t lease_s = 30) {
    jobs::Claim c;
    c.worker = worker;
    c.lease_s = lease_s;
    c.lease_token = token;
    return c;
  }
  // j enqueued, claimed and started: attempt 1 RUNNING with handle "exec".
  void running(const std::string& id, const std::string& target, const std::string& token) {
    allowed(job(id, target));
    allowed(claim("w", token));
    allowed(jobs::Start{id, token, "exec"});
  }

  Given g_;
  State shadow_;
};

// ---- everything the deciders emit ----

TEST_F(Transitions, EveryJobPathTheDecidersTakeIsAllowed) {
  g_.policy.retry_backoff_s = 1;
  running("j1", "t1", "k1");
  allowed(jobs::Heartbeat{"j1", "k1", 60});
  allowed(jobs::StepStart{"j1", "A", "k1"});
  allowed(jobs::StepDone{"j1", "A", "k1", "{}"});
  allowed(jobs::StepStart{"j1", "B", "k1"});
  allowed(jobs::StepFail{"j1", "B", "k1", "boom", true});  // FAILED, retry scheduled
  advance_s(2);
  allowed(claim("w", "k1b"));                 // the retry, attempt 2
  allowed(jobs::Start{"j1", "k1b", "exec"});  // A is reused
  allowed(jobs::StepStart{"j1", "B", "k1b"});
  allowed(jobs::StepDone{"j1", "B", "k1b", ""});  // SUCCEEDED
  allowed(jobs::Rerun{"j1", "restated"});         // attempt 3, A reused
  allowed(jobs::Cancel{"j1", "not needed"});      // QUEUED -> CANCELLED

  allowed(job("j2", "t2"));
  allowed(claim("w", "k2"));
  allowed(jobs::Release{"j2", "k2"});  // LEASED -> QUEUED
  allowed(claim("w", "k2b", 5));
  allowed(jobs::Cancel{"j2", "stop"});  // requested
  advance_s(6);
  allowed(jobs::ExpireLeases{});  // LEASED + cancel -> CANCELLED

  running("j3", "t3", "k3");
  allowed(jobs::Cancel{"j3", "stop"});
  allowed(jobs::StepStart{"j3", "A", "k3"});  // refused: CANCELLED at the boundary
  running("j4", "t4", "k4");
  allowed(jobs::Cancel{"j4", "stop"});
  allowed(jobs::CancelAck{"j4", "k4"});
}

TEST_F(Transitions, EveryRecoveryPathTheDecidersTakeIsAllowed) {
  running("j1", "t1", "k1");
  advance_s(31);
  allowed(jobs::ExpireLeases{});  // RUNNING -> STALE, hold placed
  jobs::Reattach again{"j1", "w2", "exec", "running", std::nullopt, 30, "k1b"};
  allowed(again);  // STALE -> RUNNING, hold released
  allowed(jobs::OutcomeUnknown{"j1", "k1b", holds::kResultUnknown, "lost the reply"});
  jobs::Reattach exited{"j1", "w2", "exec", "exited", 0, std::nullopt, ""};
  allowed(exited);  // STALE -> SUCCEEDED

  running("j2", "t2", "k2");
  allowed(jobs::OutcomeUnknown{"j2", "k2", holds::kExecutionStateUnknown, ""});
  std::string hold;
  for (const auto& [id, h] : g_.state.holds.by_id) {
    if (h.job == "j2" && !h.released) hold = id;
  }
  ASSERT_FALSE(hold.empty());
  allowed(holds::ReleaseHold{hold, "stopped by hand", true, "FAILED"});  // resolves j2

  allowed(holds::Place{"h1", "t9", holds::kExecutionStateUnknown, "manual", ""});
  allowed(holds::ReleaseHold{"h1", "checked", true, std::nullopt});
  allowed(holds::Place{"h2", "t2", holds::kResultUnknown, "check output", "j2"});
}

TEST_F(Transitions, EveryYieldPathTheDecidersTakeIsAllowed) {
  jobs::Enqueue once = job("j1", "t1");
  once.max_attempts = 1;
  allowed(once);
  allowed(claim("w", "k1"));
  allowed(jobs::Start{"j1", "k1", "exec"});
  allowed(jobs::StepStart{"j1", "A", "k1"});
  allowed(jobs::StepDone{"j1", "A", "k1", "{}"});
  allowed(jobs::Yield{"j1", "k1", "redeploy"});  // YIELDED, attempt 2 QUEUED, A reused
  allowed(claim("w2", "k1b"));
  allowed(jobs::Start{"j1", "k1b", "exec"});
  allowed(jobs::StepStart{"j1", "B", "k1b"});
  allowed(jobs::Yield{"j1", "k1b", ""});          // refused: step B is RUNNING
  allowed(jobs::StepDone{"j1", "B", "k1b", ""});  // SUCCEEDED
  ASSERT_EQ(g_.state.jobs.by_id.at("j1").latest().state, jobs::AttemptState::kSucceeded);

  // A retry after a yield: the yielded attempt does not count.
  jobs::Enqueue twice = job("j2", "t2");
  twice.max_attempts = 2;
  allowed(twice);
  allowed(claim("w", "k2"));
  allowed(jobs::Start{"j2", "k2", "exec"});
  allowed(jobs::Yield{"j2", "k2", ""});
  allowed(claim("w", "k2b"));
  allowed(jobs::Start{"j2", "k2b", "exec"});
  allowed(jobs::StepStart{"j2", "A", "k2b"});
  allowed(jobs::StepFail{"j2", "A", "k2b", "boom", true});  // attempt 3, the second counted
  ASSERT_EQ(g_.state.jobs.by_id.at("j2").attempts.size(), 3u);

  running("j3", "t3", "k3");
  allowed(jobs::Cancel{"j3", "stop"});
  allowed(jobs::Yield{"j3", "k3", ""});  // CANCELLED at the boundary
}

TEST_F(Transitions, EveryStepExitPathTheDecidersTakeIsAllowed) {
  g_.policy.retry_backoff_s = 3600;  // j2's retry stays out of the later claims' way
  auto step_exit = [](const std::string& id, const std::string& step, int code,
                      const std::string& token) {
    jobs::Reattach r{id, "w2", "exec", "exited", code, std::nullopt, token};
    r.step = step;
    r.retryable = true;
    return r;
  };
  running("j1", "t1", "k1");
  allowed(jobs::StepStart{"j1", "A", "k1"});
  advance_s(31);
  allowed(jobs::ExpireLeases{});            // RUNNING -> STALE, hold placed
  allowed(step_exit("j1", "A", 0, "k1b"));  // A DONE, STALE -> RUNNING, hold released
  allowed(jobs::StepStart{"j1", "B", "k1b"});
  allowed(step_exit("j1", "B", 0, "k1c"));  // last step: SUCCEEDED

  running("j2", "t2", "k2");
  allowed(jobs::StepStart{"j2", "A", "k2"});
  allowed(jobs::OutcomeUnknown{"j2", "k2", holds::kExecutionStateUnknown, ""});
  allowed(step_exit("j2", "A", 9, "k2b"));  // STALE -> FAILED, retry, hold released
  ASSERT_EQ(g_.state.jobs.by_id.at("j2").latest().number, 2);

  running("j3", "t3", "k3");
  allowed(jobs::StepStart{"j3", "A", "k3"});
  allowed(jobs::Cancel{"j3", "stop"});
  advance_s(31);
  allowed(jobs::ExpireLeases{});            // STALE with a cancel requested
  allowed(step_exit("j3", "A", 0, "k3b"));  // STALE -> CANCELLED, hold released
  ASSERT_EQ(g_.state.jobs.by_id.at("j3").latest().state, jobs::AttemptState::kCancelled);

  running("j4", "t4", "k4");
  allowed(jobs::StepStart{"j4", "A", "k4"});
  allowed(step_exit("j4", "A", 0, "k4b"));  // RUNNING -> RUNNING under a new lease
  allowed(jobs::StepStart{"j4", "B", "k4b"});
}

TEST_F(Transitions, EveryConnectorPathTheDecidersTakeIsAllowed) {
  g_.policy.stale_lock_s = 100;
  allowed(connectors::Create{"c1", "alpha", 60});
  allowed(connectors::StartSync{"c1", "s1"});
  connectors::ReportProgress progress{"c1", "s1", {}};
  progress.documents.pending = {"d1", "d2"};
  allowed(progress);
  allowed(connectors::ReportFailed{"c1", "s1", "disk full"});
  allowed(connectors::ReportProgress{"c1", "s1", {}});  // ignored: not the running sync
  allowed(connectors::StartSync{"c1", "s2"});
  advance_s(61);
  allowed(connectors::RunSchedule{});  // skipped: a sync is running
  advance_s(120);
  allowed(connectors::RunSchedule{});  // the lock is stale: broken, a new sync starts
  allowed(connectors::AbortSync{"c1"});
  connectors::Update pause;
  pause.id = "c1";
  pause.status = "paused";
  pause.name = "alpha 2";
  allowed(pause);
  advance_s(600);
  allowed(connectors::RecordScheduleGaps{});  // the slots missed meanwhile
  advance_s(60);
  allowed(connectors::RunSchedule{});  // skipped: paused
  allowed(connectors::Delete{"c1"});
  allowed(connectors::Create{"c1", "alpha again", 0});  // a deleted id may come back
}

// ---- refusals ----

TEST_F(Transitions, JobStartedOnAQueuedAttemptIsRefused) {
  allowed(job("j1", "t1"));
  fb::JobStartedT e;
  e.attempt = 1;
  refused("job/j1", e, "attempt 1 is QUEUED, JobStarted needs LEASED");
}

TEST_F(Transitions, SuccessOfAStepThatIsNotRunningIsRefused) {
  running("j1", "t1", "k1");
  fb::StepSucceededT e;
  e.attempt = 1;
  e.step = "A";
  refused("job/j1", e, "step A is PENDING, not RUNNING");
}

TEST_F(Transitions, AStepOutOfPlanOrderIsRefused) {
  running("j1", "t1", "k1");
  fb::StepStartedT e;
  e.attempt = 1;
  e.step = "B";
  refused("job/j1", e, "step B is not the next PENDING step (A)");
}

TEST_F(Transitions, AnEventOfAnOlderAttemptIsRefused) {
  running("j1", "t1", "k1");
  allowed(jobs::StepStart{"j1", "A", "k1"});
  allowed(jobs::StepFail{"j1", "A", "k1", "boom", true});
  fb::AttemptSucceededT e;
  e.attempt = 1;
  refused("job/j1", e, "names attempt 1, the latest attempt is 2 (QUEUED)");
}

TEST_F(Transitions, ALeaseOnATargetHeldByAnotherJobIsRefused) {
  allowed(job("j1", "t1"));
  allowed(claim("w", "k1"));
  allowed(job("j2", "t1"));
  fb::JobLeasedT e;
  e.attempt = 1;
  e.worker = "w2";
  refused("job/j2", e, "target t1 is held by job j1");
}

TEST_F(Transitions, ALeaseOnATargetBlockedByAHoldIsRefused) {
  allowed(holds::Place{"h1", "t1", holds::kExecutionStateUnknown, "manual", ""});
  allowed(job("j1", "t1"));
  fb::JobLeasedT e;
  e.attempt = 1;
  refused("job/j1", e, "target t1 is blocked by hold h1");
}

TEST_F(Transitions, ALeaseBeforeNotBeforeIsRefused) {
  jobs::Enqueue later = job("j1", "t1");
  later.not_before_ms = g_.now_ms + 60 * kMsPerS;
  allowed(later);
  fb::JobLeasedT e;
  e.attempt = 1;
  refused("job/j1", e, "may not start before");
}

TEST_F(Transitions, SuccessWithStepsLeftIsRefused) {
  running("j1", "t1", "k1");
  fb::AttemptSucceededT e;
  e.attempt = 1;
  refused("job/j1", e, "step A is PENDING: no success before every step is done");
}

TEST_F(Transitions, ACancelOfRunningWorkThatNobodyRequestedIsRefused) {
  running("j1", "t1", "k1");
  fb::AttemptCancelledT e;
  e.attempt = 1;
  refused("job/j1", e, "attempt 1 is RUNNING and no cancel was requested");
}

TEST_F(Transitions, ATerminalAttemptNeverChanges) {
  allowed(job("j1", "t1"));
  allowed(jobs::Cancel{"j1", ""});
  fb::JobLeasedT e;
  e.attempt = 1;
  refused("job/j1", e, "attempt 1 is CANCELLED, JobLeased needs QUEUED");
}

TEST_F(Transitions, ARerunWhileTheLatestAttemptIsLiveIsRefused) {
  running("j1", "t1", "k1");
  fb::RerunRequestedT e;
  e.attempt = 2;
  e.previous_attempt = 1;
  refused("job/j1", e,
          "attempt 1 is RUNNING, RerunRequested needs SUCCEEDED or FAILED or CANCELLED or YIELDED");
}

TEST_F(Transitions, ARetryBeyondMaxAttemptsIsRefused) {
  jobs::Enqueue once = job("j1", "t1");
  once.max_attempts = 1;
  allowed(once);
  allowed(claim("w", "k1"));
  allowed(jobs::Start{"j1", "k1", "exec"});
  allowed(jobs::StepStart{"j1", "A", "k1"});
  allowed(jobs::StepFail{"j1", "A", "k1", "boom", true});  // no retry: max_attempts 1
  fb::RetryScheduledT e;
  e.attempt = 2;
  e.previous_attempt = 1;
  refused("job/j1", e, "attempt 2 exceeds max_attempts 1");
}

TEST_F(Transitions, ARetryOfAnAttemptThatDidNotFailIsRefused) {
  running("j1", "t1", "k1");
  allowed(jobs::StepStart{"j1", "A", "k1"});
  allowed(jobs::StepDone{"j1", "A", "k1", ""});
  allowed(jobs::StepStart{"j1", "B", "k1"});
  allowed(jobs::StepDone{"j1", "B", "k1", ""});  // SUCCEEDED
  fb::RetryScheduledT e;
  e.attempt = 2;
  e.previous_attempt = 1;
  refused("job/j1", e, "attempt 1 is SUCCEEDED, RetryScheduled needs FAILED");
}

TEST_F(Transitions, AHoldReleaseResolvesOnlyAStaleAttempt) {
  running("j1", "t1", "k1");
  fb::AttemptResolvedT e;
  e.attempt = 1;
  e.outcome = "FAILED";
  e.evidence = holds::kEvidenceHoldRelease;
  refused("job/j1", e, "attempt 1 is RUNNING, a hold release resolves a STALE attempt only");
}

TEST_F(Transitions, AYieldWhileAStepRunsIsRefused) {
  running("j1", "t1", "k1");
  allowed(jobs::StepStart{"j1", "A", "k1"});
  fb::AttemptYieldedT e;
  e.attempt = 1;
  e.next_attempt = 2;
  refused("job/j1", e, "step A is still RUNNING");
}

TEST_F(Transitions, AYieldOfAnAttemptThatIsNotRunningIsRefused) {
  allowed(job("j1", "t1"));
  allowed(claim("w", "k1"));
  fb::AttemptYieldedT e;
  e.attempt = 1;
  e.next_attempt = 2;
  refused("job/j1", e, "attempt 1 is LEASED, AttemptYielded needs RUNNING");
}

TEST_F(Transitions, AYieldWithACancelRequestedIsRefused) {
  running("j1", "t1", "k1");
  allowed(jobs::Cancel{"j1", "stop"});
  fb::AttemptYieldedT e;
  e.attempt = 1;
  e.next_attempt = 2;
  refused("job/j1", e, "cancel was requested: the attempt may not yield");
}

TEST_F(Transitions, AYieldThatReusesAnUnfinishedStepOrSkipsAnAttemptIsRefused) {
  running("j1", "t1", "k1");
  fb::AttemptYieldedT e;
  e.attempt = 1;
  e.next_attempt = 2;
  e.reused_steps = {"A"};
  refused("job/j1", e, "reuses step A, which attempt 1 did not complete");
  e.reused_steps.clear();
  e.next_attempt = 3;
  refused("job/j1", e, "opens attempt 3 after 1, the latest attempt is 1");
}

TEST_F(Transitions, AStepsExitThatSucceedsTheAttemptWithStepsLeftIsRefused) {
  running("j1", "t1", "k1");
  allowed(jobs::StepStart{"j1", "A", "k1"});
  allowed(jobs::StepDone{"j1", "A", "k1", ""});
  fb::AttemptResolvedT e;
  e.attempt = 1;
  e.outcome = "SUCCEEDED";
  e.evidence = "exited";
  e.has_exit_code = true;
  e.step = "A";
  refused("job/j1", e, "step B is PENDING: no success before every step is done");
}

TEST_F(Transitions, ACancelOfAStaleAttemptThatNobodyRequestedIsRefused) {
  running("j1", "t1", "k1");
  allowed(jobs::OutcomeUnknown{"j1", "k1", holds::kResultUnknown, ""});
  fb::AttemptCancelledT e;
  e.attempt = 1;
  refused("job/j1", e, "attempt 1 is STALE and no cancel was requested");
}

TEST_F(Transitions, ASecondEnqueueOfAJobIsRefused) {
  allowed(job("j1", "t1"));
  fb::JobEnqueuedT e;
  e.target = "t1";
  e.plan = {"A"};
  refused("job/j1", e, "the job already exists");
}

TEST_F(Transitions, AnEventOfAJobThatDoesNotExistIsRefused) {
  fb::JobLeasedT e;
  e.attempt = 1;
  refused("job/ghost", e, "the job does not exist");
}

TEST_F(Transitions, AJobEventOnAnotherKindOfStreamIsRefused) {
  fb::JobLeasedT e;
  e.attempt = 1;
  refused("connector/c1", e, "a job event outside a job stream");
}

TEST_F(Transitions, ASyncStartedWhileOneRunsIsRefused) {
  allowed(connectors::Create{"c1", "alpha", 0});
  allowed(connectors::StartSync{"c1", "s1"});
  fb::SyncStartedT e;
  e.sync_id = "s2";
  e.trigger = "manual";
  refused("connector/c1", e, "the connector accepts no sync now: Sync already in progress");
}

TEST_F(Transitions, AScheduleOutsideItsBoundsIsRefused) {
  // A forged schedule this large would overflow the next slot's time.
  fb::ConnectorCreatedT created;
  created.name = "alpha";
  created.sync_schedule_s = INT64_MAX / 10;
  refused("connector/c1", created, "sync_schedule_s");
  allowed(connectors::Create{"c1", "alpha", 60});
  fb::ConnectorUpdatedT updated;
  updated.schedule_changed = true;
  updated.sync_schedule_s = -5;
  refused("connector/c1", updated, "is outside 0..");
}

TEST_F(Transitions, AReportOfAnotherSyncIsRefused) {
  allowed(connectors::Create{"c1", "alpha", 0});
  allowed(connectors::StartSync{"c1", "s1"});
  fb::SyncSucceededT e;
  e.sync_id = "s0";
  refused("connector/c1", e, "sync s0 is not the running sync s1");
}

TEST_F(Transitions, AnIgnoredReportOfTheRunningSyncIsRefused) {
  allowed(connectors::Create{"c1", "alpha", 0});
  allowed(connectors::StartSync{"c1", "s1"});
  fb::SyncReportIgnoredT e;
  e.sync_id = "s1";
  refused("connector/c1", e, "sync s1 is the running sync");
}

TEST_F(Transitions, ADeletionWithoutItsStartIsRefused) {
  allowed(connectors::Create{"c1", "alpha", 0});
  refused("connector/c1", fb::ConnectorDeletedT{}, "the connector is active, not deleting");
}

TEST_F(Transitions, AStatusChangeFromAStatusItIsNotInIsRefused) {
  allowed(connectors::Create{"c1", "alpha", 0});
  fb::ConnectorStatusChangedT e;
  e.from = "paused";
  e.to = "active";
  refused("connector/c1", e, "changes status from paused, the connector is active");
}

TEST_F(Transitions, AHoldReleasedTwiceIsRefused) {
  allowed(holds::Place{"h1", "t1", holds::kResultUnknown, "check", ""});
  allowed(holds::ReleaseHold{"h1", "checked", std::nullopt, std::nullopt});
  fb::HoldReleasedT e;
  e.note = "again";
  refused("hold/h1", e, "the hold is already released");
}

TEST_F(Transitions, AHoldForAJobOnAnotherTargetIsRefused) {
  allowed(job("j1", "t1"));
  fb::HoldPlacedT e;
  e.target = "t2";
  e.kind = holds::kResultUnknown;
  e.job = "j1";
  refused("hold/h1", e, "job j1 changes target t1, not t2");
}

}  // namespace
}  // namespace runledger::testing

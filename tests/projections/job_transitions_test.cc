// The attempt state machine of docs/domain.md 1.1: every allowed transition, the
// forbidden pairs the spec names, and terminal states refusing everything.
#include <functional>
#include <map>
#include <string_view>
#include <tuple>
#include <vector>

#include "http/rejection_status.h"
#include "projections/job_commands.h"
#include "tests/projections/job_testing.h"

namespace runledger::job_tests {
namespace {

using JobTransitions = JobTest;

// ---- allowed: one scenario per row of the 1.1 table ----

TEST_F(JobTransitions, QueuedToLeasedByClaim) {
  enqueue("j1");
  ASSERT_EQ(claim(), "j1");
  EXPECT_EQ(state_of("j1"), AttemptState::kLeased);
}

TEST_F(JobTransitions, QueuedToCancelledByCancel) {
  enqueue("j1");
  Decision d = cancel("j1");
  EXPECT_EQ(runledger::testing::Given::types(d), Types{"AttemptCancelled"});
  EXPECT_EQ(state_of("j1"), AttemptState::kCancelled);
}

TEST_F(JobTransitions, LeasedToRunningByStart) {
  enqueue("j1");
  claim();
  Decision d = start("j1");
  EXPECT_EQ(runledger::testing::Given::types(d), Types{"JobStarted"});
  EXPECT_EQ(state_of("j1"), AttemptState::kRunning);
}

TEST_F(JobTransitions, LeasedToQueuedByRelease) {
  enqueue("j1");
  claim();
  EXPECT_EQ(runledger::testing::Given::types(release("j1")), Types{"LeaseReleased"});
  EXPECT_EQ(state_of("j1"), AttemptState::kQueued);
}

TEST_F(JobTransitions, LeasedToQueuedByLeaseExpiry) {
  enqueue("j1");
  claim();
  advance_s(g.policy.lease_default_s);
  EXPECT_EQ(runledger::testing::Given::types(expire()), Types{"LeaseExpired"});
  EXPECT_EQ(state_of("j1"), AttemptState::kQueued);
}

TEST_F(JobTransitions, LeasedToCancelledByCancelAck) {
  enqueue("j1");
  claim();
  cancel("j1");
  EXPECT_EQ(runledger::testing::Given::types(cancel_ack("j1")), Types{"AttemptCancelled"});
  EXPECT_EQ(state_of("j1"), AttemptState::kCancelled);
}

TEST_F(JobTransitions, RunningToSucceededAfterTheLastStep) {
  given_running("j1");
  run_steps("j1");
  EXPECT_EQ(state_of("j1"), AttemptState::kSucceeded);
}

TEST_F(JobTransitions, RunningToFailedByStepFailure) {
  given_running("j1");
  step_start("j1", "FETCH");
  Decision d = step_fail("j1", "FETCH", false);
  EXPECT_EQ(runledger::testing::Given::types(d), (Types{"StepFailed", "AttemptFailed"}));
  EXPECT_EQ(state_of("j1"), AttemptState::kFailed);
}

TEST_F(JobTransitions, RunningToCancelledByCancelAck) {
  given_running("j1");
  cancel("j1");
  expect_accepted(cancel_ack("j1"));
  EXPECT_EQ(state_of("j1"), AttemptState::kCancelled);
}

TEST_F(JobTransitions, RunningToStaleByOutcomeUnknown) {
  given_running("j1");
  expect_accepted(outcome_unknown("j1", holds::kExecutionStateUnknown));
  EXPECT_EQ(state_of("j1"), AttemptState::kStale);
}

TEST_F(JobTransitions, StaleToRunningByReattach) {
  given_stale("j1");
  expect_accepted(reattach_running("j1"));
  EXPECT_EQ(state_of("j1"), AttemptState::kRunning);
}

TEST_F(JobTransitions, StaleToSucceededByObservedExitZero) {
  given_stale("j1");
  expect_accepted(reattach_exited("j1", 0));
  EXPECT_EQ(state_of("j1"), AttemptState::kSucceeded);
}

TEST_F(JobTransitions, StaleToFailedByObservedNonZeroExit) {
  given_stale("j1");
  expect_accepted(reattach_exited("j1", 2));
  EXPECT_EQ(state_of("j1"), AttemptState::kFailed);
}

// ---- forbidden pairs named in 1.1 ----

TEST_F(JobTransitions, QueuedCannotSucceedWithoutARun) {
  enqueue("j1");
  token["j1"] = "never-handed-out";
  expect_invalid_transition(step_done("j1", "FETCH"), AttemptState::kQueued);
  EXPECT_EQ(state_of("j1"), AttemptState::kQueued);
}

TEST_F(JobTransitions, RefusalNamesTheStateAndWhatItAllows) {
  enqueue("j1");
  Decision d = g.run(jobs::Start{"j1", "no-lease", ""});
  ASSERT_TRUE(d.rejection);
  EXPECT_EQ(d.rejection->message, "job j1 is QUEUED: cannot start (allowed: claim, cancel)");
  EXPECT_EQ(d.rejection->extra["allowed"], nlohmann::json({"claim", "cancel"}));
}

TEST_F(JobTransitions, FailedAttemptIsNeverRevived) {
  given_failed("j1");
  expect_invalid_transition(start("j1"), AttemptState::kFailed);
  expect_invalid_transition(reattach_running("j1"), AttemptState::kFailed);
  EXPECT_EQ(state_of("j1"), AttemptState::kFailed);
}

TEST_F(JobTransitions, SucceededNeverFlipsToFailed) {
  given_succeeded("j1");
  expect_invalid_transition(step_fail("j1", "AGGREGATE", false), AttemptState::kSucceeded);
  expect_invalid_transition(reattach_exited("j1", 1), AttemptState::kSucceeded);
  EXPECT_EQ(state_of("j1"), AttemptState::kSucceeded);
}

TEST_F(JobTransitions, RunningNeverGoesBackToQueued) {
  given_running("j1");
  expect_invalid_transition(release("j1"), AttemptState::kRunning);
  EXPECT_EQ(state_of("j1"), AttemptState::kRunning);
}

TEST_F(JobTransitions, StaleNeverGoesBackToQueued) {
  given_stale("j1");
  expect_invalid_transition(release("j1"), AttemptState::kStale);
  expect_invalid_transition(rerun("j1"), AttemptState::kStale);
  EXPECT_EQ(state_of("j1"), AttemptState::kStale);
}

TEST_F(JobTransitions, StaleIsNotCancelledWithoutAResolution) {
  given_stale("j1");
  expect_invalid_transition(cancel("j1"), AttemptState::kStale);
}

TEST_F(JobTransitions, StaleWithACancelRequestedAllowsOnlyAReattach) {
  // Given a cancel requested while running, and then the lease lost
  given_running("j1");
  expect_accepted(cancel("j1"));
  advance_s(g.policy.lease_default_s);
  expect_accepted(expire());
  ASSERT_EQ(state_of("j1"), AttemptState::kStale);
  // When the worker acknowledges the cancel, Then it is refused (STALE may
  // not become CANCELLED), and what the refusal allows does not offer it.
  Decision d = cancel_ack("j1");
  expect_invalid_transition(d, AttemptState::kStale);
  EXPECT_EQ(d.rejection->extra["allowed"], nlohmann::json({"reattach"}));
  EXPECT_EQ(d.rejection->message, "job j1 is STALE: cannot cancel-ack (allowed: reattach)");
}

TEST_F(JobTransitions, ACancelRequestedOffersItsAcknowledgementWhileLeasedOrRunning) {
  enqueue("j1");
  claim();
  expect_accepted(cancel("j1"));
  Decision leased = step_start("j1", "FETCH");
  ASSERT_TRUE(leased.rejection);
  EXPECT_EQ(leased.rejection->extra["allowed"],
            nlohmann::json({"heartbeat", "release", "start", "cancel", "cancel-ack"}));
  given_running("j2", "t2");
  expect_accepted(cancel("j2"));
  Decision running = start("j2");
  ASSERT_TRUE(running.rejection);
  EXPECT_EQ(running.rejection->extra["allowed"].back(), "cancel-ack");
}

TEST_F(JobTransitions, QueuedRefusesEveryCommandOfALease) {
  enqueue("j1");
  token["j1"] = "never-handed-out";
  expect_invalid_transition(heartbeat("j1"), AttemptState::kQueued);
  expect_invalid_transition(release("j1"), AttemptState::kQueued);
  expect_invalid_transition(step_start("j1", "FETCH"), AttemptState::kQueued);
  expect_invalid_transition(cancel_ack("j1"), AttemptState::kQueued);
  expect_invalid_transition(outcome_unknown("j1", holds::kResultUnknown), AttemptState::kQueued);
  expect_invalid_transition(reattach_running("j1"), AttemptState::kQueued);
}

TEST_F(JobTransitions, LeasedRefusesStepsAndOutcomeReportsBeforeStart) {
  enqueue("j1");
  claim();
  expect_invalid_transition(step_start("j1", "FETCH"), AttemptState::kLeased);
  expect_invalid_transition(step_done("j1", "FETCH"), AttemptState::kLeased);
  expect_invalid_transition(outcome_unknown("j1", holds::kResultUnknown), AttemptState::kLeased);
  expect_invalid_transition(reattach_running("j1"), AttemptState::kLeased);
  EXPECT_EQ(state_of("j1"), AttemptState::kLeased);
}

TEST_F(JobTransitions, RunningRefusesASecondStart) {
  given_running("j1");
  expect_invalid_transition(start("j1"), AttemptState::kRunning);
}

// ---- every terminal state refuses every worker command and cancel ----

class JobTerminalStates : public JobTest, public ::testing::WithParamInterface<AttemptState> {
 protected:
  void given_terminal(const std::string& id) {
    switch (GetParam()) {
      case AttemptState::kSucceeded:
        return given_succeeded(id);
      case AttemptState::kFailed:
        return given_failed(id);
      case AttemptState::kCancelled:
        return given_cancelled(id);
      case AttemptState::kQueued:
      case AttemptState::kLeased:
      case AttemptState::kRunning:
      case AttemptState::kStale:
        FAIL() << "not a terminal state";
      case AttemptState::kYielded:
        FAIL() << "never the latest attempt: the yield opens the next one";
    }
  }
};

TEST_P(JobTerminalStates, RefuseEveryWorkerCommandAndCancel) {
  given_terminal("j1");
  if (token["j1"].empty()) token["j1"] = "never-handed-out";
  std::string before = snapshot_of("j1");
  const AttemptState st = GetParam();
  expect_invalid_transition(heartbeat("j1"), st);
  expect_invalid_transition(release("j1"), st);
  expect_invalid_transition(start("j1"), st);
  expect_invalid_transition(step_start("j1", "FETCH"), st);
  expect_invalid_transition(step_done("j1", "FETCH"), st);
  expect_invalid_transition(step_fail("j1", "FETCH", true), st);
  expect_invalid_transition(cancel("j1"), st);
  expect_invalid_transition(cancel_ack("j1"), st);
  expect_invalid_transition(outcome_unknown("j1", holds::kExecutionStateUnknown), st);
  expect_invalid_transition(reattach_running("j1"), st);
  expect_invalid_transition(reattach_exited("j1", 0), st);
  expect_invalid_transition(reattach_step("j1", "FETCH", 0), st);
  expect_invalid_transition(yield("j1"), st);
  EXPECT_EQ(snapshot_of("j1"), before);
}

TEST_P(JobTerminalStates, AllowOnlyARerun) {
  given_terminal("j1");
  Decision d = heartbeat("j1");
  ASSERT_TRUE(d.rejection);
  EXPECT_EQ(d.rejection->extra["allowed"], nlohmann::json({"rerun"}));
}

TEST_P(JobTerminalStates, AreNeverClaimedAgain) {
  given_terminal("j1");
  EXPECT_EQ(claim("w9"), "");
}

INSTANTIATE_TEST_SUITE_P(Terminal, JobTerminalStates,
                         ::testing::Values(AttemptState::kSucceeded, AttemptState::kFailed,
                                           AttemptState::kCancelled),
                         [](const auto& info) { return std::string(jobs::to_string(info.param)); });

// ---- unknown jobs ----

TEST_F(JobTransitions, EveryCommandOnAnUnknownJobIsNotFound) {
  token["nope"] = "x";
  expect_refused(heartbeat("nope"), 404, "not_found");
  expect_refused(release("nope"), 404, "not_found");
  expect_refused(start("nope"), 404, "not_found");
  expect_refused(step_start("nope", "FETCH"), 404, "not_found");
  expect_refused(step_done("nope", "FETCH"), 404, "not_found");
  expect_refused(step_fail("nope", "FETCH", false), 404, "not_found");
  expect_refused(cancel("nope"), 404, "not_found");
  expect_refused(cancel_ack("nope"), 404, "not_found");
  expect_refused(outcome_unknown("nope", holds::kResultUnknown), 404, "not_found");
  expect_refused(reattach_running("nope"), 404, "not_found");
  expect_refused(rerun("nope"), 404, "not_found");
}

// ---- the table of projections/job_commands.h and the deciders agree ----

// For each state a latest attempt can be in and each command sent to one
// job: a command the table refuses in that state is refused for its state
// (409 invalid_transition naming the state and the table's `allowed`); one
// the table accepts is never refused for its state alone. A claim is not
// sent to one job (it takes the best ready one): the claim tests cover it.
TEST_F(JobTransitions, EachStateRefusesByItsStateExactlyWhatTheTableRefuses) {
  using Builder = std::function<void(const std::string&, const std::string&)>;
  // Built in an order in which making one does not move another: an expiry
  // moves every lease, and a claim takes the oldest queued job.
  const std::vector<std::pair<AttemptState, Builder>> states = {
      {AttemptState::kStale, [&](auto& id, auto& t) { given_stale(id, t); }},
      {AttemptState::kSucceeded, [&](auto& id, auto& t) { given_succeeded(id, t); }},
      {AttemptState::kFailed, [&](auto& id, auto& t) { given_failed(id, t); }},
      {AttemptState::kCancelled, [&](auto& id, auto& t) { given_cancelled(id, t); }},
      {AttemptState::kRunning, [&](auto& id, auto& t) { given_running(id, t); }},
      {AttemptState::kLeased,
       [&](auto& id, auto& t) {
         enqueue(id, t);
         ASSERT_EQ(claim(), id);
       }},
      {AttemptState::kQueued, [&](auto& id, auto& t) { enqueue(id, t); }},
  };
  const std::map<std::string_view, std::function<Decision(const std::string&)>> send = {
      {jobs::detail::kCmdHeartbeat, [&](auto& id) { return heartbeat(id); }},
      {jobs::detail::kCmdRelease, [&](auto& id) { return release(id); }},
      {jobs::detail::kCmdStart, [&](auto& id) { return start(id); }},
      {jobs::detail::kCmdStepStart, [&](auto& id) { return step_start(id, "FETCH"); }},
      {jobs::detail::kCmdStepDone, [&](auto& id) { return step_done(id, "FETCH"); }},
      {jobs::detail::kCmdStepFailed, [&](auto& id) { return step_fail(id, "FETCH", false); }},
      {jobs::detail::kCmdCancel, [&](auto& id) { return cancel(id); }},
      {jobs::detail::kCmdOutcomeUnknown,
       [&](auto& id) { return outcome_unknown(id, holds::kExecutionStateUnknown); }},
      {jobs::detail::kCmdReattach, [&](auto& id) { return reattach_running(id); }},
      {jobs::detail::kCmdYield, [&](auto& id) { return yield(id); }},
      {jobs::detail::kCmdRerun, [&](auto& id) { return rerun(id); }},
      {jobs::detail::kCmdCancelAck, [&](auto& id) { return cancel_ack(id); }},
  };
  ASSERT_EQ(send.size() + 1, std::size(jobs::detail::kCommandRules)) << "a command is not sent";
  std::vector<std::tuple<AttemptState, std::string_view, std::string>> cases;
  for (const auto& [state, build] : states) {
    for (const auto& [command, _] : send) {
      const std::string id = std::string(to_string(state)) + "-" + std::string(command);
      build(id, "target-" + id);
      ASSERT_EQ(state_of(id), state) << id;
      cases.emplace_back(state, command, id);
    }
  }
  size_t refused_by_state = 0;
  for (const auto& [state, command, id] : cases) {
    const nlohmann::json allowed = jobs::detail::allowed_commands(job_of(id).latest());
    const Decision d = send.at(command)(id);
    const std::string by_state_alone = "job " + id + " is " + to_string(state) + ": cannot " +
                                       std::string(command) + " (allowed: " +
                                       [&] {
                                         std::string list;
                                         for (const auto& c : allowed) {
                                           list +=
                                               (list.empty() ? "" : ", ") + c.get<std::string>();
                                         }
                                         return list;
                                       }() +
                                       ")";
    if (!jobs::detail::state_accepts(state, command)) {
      ++refused_by_state;
      ASSERT_TRUE(d.rejection) << id << " was taken";
      EXPECT_EQ(code_name(d.rejection->code), "invalid_transition")
          << id << ": " << d.rejection->message;
      EXPECT_EQ(d.rejection->extra["state"], to_string(state)) << id;
      EXPECT_EQ(d.rejection->extra["allowed"], allowed) << id;
    } else if (d.rejection) {
      EXPECT_NE(d.rejection->message, by_state_alone) << id << " is refused for its state";
    }
  }
  EXPECT_GT(refused_by_state, 0u);
}

}  // namespace
}  // namespace runledger::job_tests

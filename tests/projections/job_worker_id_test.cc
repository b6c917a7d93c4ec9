// "Events of worker commands also carry the worker id in their data"
// (docs/domain.md, events): every event a worker's command appends, not only the
// step's own. The end of the attempt that a step reaches, a cancellation met
// at a boundary, a staleness and the hold placed with it, a reattach's
// resolution and the hold it releases all name the worker, as readers see the
// event's data. What an operator or the engine's timers cause names none.
#include <string>
#include <vector>

#include "events/event_codec.h"
#include "events/event_json.h"
#include "tests/projections/job_testing.h"

namespace runledger::job_tests {
namespace {

using runledger::testing::Given;

class JobWorkerId : public JobTest {
 protected:
  // The events `d` appended, as the API and `runledger events` show them.
  std::vector<nlohmann::json> shown(const Decision& d) {
    const auto& log = g.log();
    std::vector<nlohmann::json> out;
    for (size_t i = log.size() - d.events.size(); i < log.size(); ++i) {
      const fb::Event* e = nullptr;
      EXPECT_TRUE(decode_event(log[i], &e).ok());
      if (e != nullptr) out.push_back(event_json(*e));
    }
    return out;
  }
  // `d` appended events of `types`, each naming `worker` ("" for none) in
  // its data.
  void expect_worker(const Decision& d, const Types& types, const std::string& worker) {
    ASSERT_EQ(Given::types(d), types);
    for (const nlohmann::json& e : shown(d)) {
      const nlohmann::json& data = e.at("data");
      if (worker.empty()) {
        EXPECT_FALSE(data.contains("worker")) << e.dump();
      } else {
        EXPECT_EQ(data.value("worker", "<none>"), worker) << e.dump();
      }
    }
  }
};

TEST_F(JobWorkerId, TheLastStepDoneNamesTheWorkerOnTheAttemptsSuccessToo) {
  given_running("j1");
  const auto& plan = job_of("j1").plan;
  for (size_t i = 0; i + 1 < plan.size(); ++i) {
    expect_accepted(step_start("j1", plan[i]));
    expect_accepted(step_done("j1", plan[i]));
  }
  expect_accepted(step_start("j1", plan.back()));
  Decision d = step_done("j1", plan.back());
  expect_worker(d, Types{"StepSucceeded", "AttemptSucceeded"}, "w1");
}

TEST_F(JobWorkerId, AStepFailureNamesTheWorkerOnTheAttemptsFailureAndTheRetry) {
  given_running("j1");
  expect_accepted(step_start("j1", "FETCH"));
  Decision d = step_fail("j1", "FETCH", /*retryable=*/true);
  expect_worker(d, Types{"StepFailed", "AttemptFailed", "RetryScheduled"}, "w1");
}

TEST_F(JobWorkerId, ACancellationMetAtAWorkersBoundaryNamesTheWorker) {
  // at the start
  enqueue("a", "ta");
  ASSERT_EQ(claim("w-a"), "a");
  cancel("a");
  Decision at_start = start("a");
  expect_worker(at_start, Types{"AttemptCancelled"}, "w-a");
  // at a step start
  enqueue("b", "tb");
  ASSERT_EQ(claim("w-b"), "b");
  expect_accepted(start("b"));
  cancel("b");
  Decision at_step_start = step_start("b", "FETCH");
  expect_worker(at_step_start, Types{"AttemptCancelled"}, "w-b");
  // at a step done with steps left
  enqueue("c", "tc");
  ASSERT_EQ(claim("w-c"), "c");
  expect_accepted(start("c"));
  expect_accepted(step_start("c", "FETCH"));
  cancel("c");
  Decision at_step_done = step_done("c", "FETCH");
  expect_worker(at_step_done, Types{"StepSucceeded", "AttemptCancelled"}, "w-c");
  // by the worker's acknowledgement
  enqueue("d", "td");
  ASSERT_EQ(claim("w-d"), "d");
  cancel("d");
  Decision acked = cancel_ack("d");
  expect_worker(acked, Types{"AttemptCancelled"}, "w-d");
  // by a release
  enqueue("e", "te");
  ASSERT_EQ(claim("w-e"), "e");
  cancel("e");
  Decision released = release("e");
  expect_worker(released, Types{"LeaseReleased", "AttemptCancelled"}, "w-e");
}

TEST_F(JobWorkerId, AnOutcomeUnknownNamesTheWorkerOnTheStalenessAndItsHold) {
  given_running("j1");
  Decision d = outcome_unknown("j1", "RESULT_UNKNOWN");
  expect_worker(d, Types{"AttemptStale", "HoldPlaced"}, "w1");
}

TEST_F(JobWorkerId, AReattachNamesTheReattachingWorkerOnWhatItResolvesAndReleases) {
  // that finds the execution exited
  given_stale("j1", "t1");
  expect_worker(reattach_exited("j1", 0), Types{"AttemptResolved", "HoldReleased"}, "w2");
  // that takes over the running execution
  given_stale("j2", "t2");
  expect_worker(reattach_running("j2", "w3"), Types{"ExecutionReattached", "HoldReleased"}, "w3");
}

TEST_F(JobWorkerId, AYieldNamesTheYieldingWorker) {
  given_running("j1");
  given_running("j2", "t2");
  expect_worker(yield("j1"), Types{"AttemptYielded"}, "w1");
  // and the cancellation it meets instead, when one was requested
  expect_accepted(cancel("j2"));
  expect_worker(yield("j2"), Types{"AttemptCancelled"}, "w1");
}

TEST_F(JobWorkerId, AStepsObservedExitNamesTheReattachingWorkerOnEveryEvent) {
  // exit 0 of a STALE attempt's middle step: it runs on under a new lease
  given_running("j1", "t1");
  expect_accepted(step_start("j1", "FETCH"));
  advance_s(g.policy.lease_default_s);
  expect_accepted(expire());
  expect_worker(reattach_step("j1", "FETCH", 0),
                Types{"StepSucceeded", "ExecutionReattached", "HoldReleased"}, "w2");
  // another code, retried
  given_running("j2", "t2");
  expect_accepted(step_start("j2", "FETCH"));
  jobs::Reattach failed = step_exit("j2", "FETCH", 1);
  failed.retryable = true;
  expect_worker(reattach_step(failed), Types{"StepFailed", "AttemptResolved", "RetryScheduled"},
                "w2");
}

TEST_F(JobWorkerId, WhatAnOperatorOrATimerCausesNamesNoWorker) {
  // an operator's cancel of a queued job
  enqueue("q", "tq");
  expect_worker(cancel("q"), Types{"AttemptCancelled"}, "");
  // a lease that ran out while RUNNING: the expiry names the lease's worker
  // (as it always did: it is what expired), the staleness and hold none
  given_running("r", "tr");
  advance_s(g.policy.lease_default_s);
  Decision expired = expire();
  ASSERT_EQ(Given::types(expired), (Types{"LeaseExpired", "AttemptStale", "HoldPlaced"}));
  const std::vector<nlohmann::json> events = shown(expired);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0]["data"].value("worker", ""), "w1");
  EXPECT_FALSE(events[1]["data"].contains("worker")) << events[1].dump();
  EXPECT_FALSE(events[2]["data"].contains("worker")) << events[2].dump();
  // an operator's release of that hold, resolving the attempt
  const std::string hold_id = job_of("r").latest().stale_hold_id;
  Decision released =
      g.run(holds::ReleaseHold{hold_id, "checked the cluster: it stopped", true, "FAILED"});
  expect_worker(released, Types{"HoldReleased", "AttemptResolved"}, "");
}

}  // namespace
}  // namespace runledger::job_tests

// Releasing a hold (docs/domain.md section 3): the evidence each kind needs, and
// that a release without it changes nothing. The STALE-attempt cases here
// give the job as state and check the decision alone (its AttemptResolved is
// folded by the job model; hold_with_jobs_test.cc runs the whole flow).
#include <gtest/gtest.h>

#include "events/event_json.h"
#include "tests/projections/hold_testing.h"

namespace runledger::testing {
namespace {

using holds::kExecutionStateUnknown;
using holds::kResultUnknown;

TEST(HoldRelease, UnknownHoldIsNotFound) {
  Given g;
  Decision d = g.run(release_cmd("nope", "checked", true));
  expect_refused(d, 404, "not_found");
}

TEST(HoldRelease, WithoutANoteIsRefusedAndTheHoldStaysOpen) {
  Given g;
  g.run(place_cmd("h1", "orders", kExecutionStateUnknown));
  Decision d = g.run(release_cmd("h1", "", true));

  expect_refused_naming_field(d, 422, "missing_field", "note");
  EXPECT_FALSE(g.state.holds.by_id.at("h1").released);
  EXPECT_NE(holds::blocking_hold(g.state, "orders"), nullptr);
}

TEST(HoldRelease, NoteBeyondItsLimitIsRefused) {
  Given g;
  g.run(place_cmd("h1", "orders", kResultUnknown));
  Decision d = g.run(release_cmd("h1", std::string(holds::kNoteBytesMax + 1, 'n')));
  expect_refused_naming_field(d, 422, "invalid_field", "note");
}

TEST(HoldRelease, ExecutionStateUnknownWithoutConfirmedStopIsRefused) {
  Given g;
  g.run(place_cmd("h1", "orders", kExecutionStateUnknown));
  Decision d = g.run(release_cmd("h1", "asked ECS to stop it", std::nullopt));

  ASSERT_NO_FATAL_FAILURE(
      expect_refused_naming_field(d, 422, "invalid_field", "execution_stopped"));
  EXPECT_NE(d.rejection->message.find("a stop request is not a stop"), std::string::npos)
      << d.rejection->message;
  EXPECT_FALSE(g.state.holds.by_id.at("h1").released);
  EXPECT_NE(holds::blocking_hold(g.state, "orders"), nullptr);
}

TEST(HoldRelease, ExecutionStateUnknownWithStopDeniedIsRefused) {
  Given g;
  g.run(place_cmd("h1", "orders", kExecutionStateUnknown));
  Decision d = g.run(release_cmd("h1", "StopTask sent, not yet STOPPED", false));

  expect_refused_naming_field(d, 422, "invalid_field", "execution_stopped");
  EXPECT_FALSE(g.state.holds.by_id.at("h1").released);
}

TEST(HoldRelease, ExecutionStateUnknownWithConfirmedStopUnblocksTheTarget) {
  Given g;
  g.actor = "ops-bob";
  g.run(place_cmd("h1", "orders", kExecutionStateUnknown));
  g.now_ms += 60'000;
  Decision d = g.run(release_cmd("h1", "task STOPPED, exit 0", true));

  ASSERT_FALSE(d.rejection) << d.rejection->message;
  EXPECT_EQ(Given::types(d), std::vector<std::string>{"HoldReleased"});
  EXPECT_EQ(d.events[0].stream, "hold/h1");
  const holds::Hold& h = g.state.holds.by_id.at("h1");
  EXPECT_TRUE(h.released);
  EXPECT_TRUE(holds::finished(h));
  EXPECT_EQ(h.released_by, "ops-bob");
  EXPECT_EQ(h.released_at_ms, g.now_ms);
  EXPECT_EQ(h.release_note, "task STOPPED, exit 0");
  EXPECT_TRUE(h.execution_stopped);
  EXPECT_EQ(h.outcome, "");
  EXPECT_EQ(h.version, 2u);
  EXPECT_EQ(holds::blocking_hold(g.state, "orders"), nullptr);
  EXPECT_TRUE(g.state.holds.open_by_kind.empty());
}

TEST(HoldRelease, ResultUnknownNeedsNoConfirmedStop) {
  Given g;
  g.run(place_cmd("h1", "orders", kResultUnknown));
  Decision d = g.run(release_cmd("h1", "partition rows verified", std::nullopt));

  ASSERT_FALSE(d.rejection) << d.rejection->message;
  const holds::Hold& h = g.state.holds.by_id.at("h1");
  EXPECT_TRUE(h.released);
  EXPECT_FALSE(h.execution_stopped);
  EXPECT_TRUE(g.state.holds.recovery_by_target.empty());
}

TEST(HoldRelease, ReleasedEventCarriesTheEvidence) {
  Given g;
  g.run(place_cmd("h1", "orders", kExecutionStateUnknown));
  g.run(release_cmd("h1", "STOPPED seen", true));

  nlohmann::json e = last_event_json(g);
  EXPECT_EQ(e["type"], "HoldReleased");
  EXPECT_EQ(e["stream"], "hold/h1");
  EXPECT_EQ(e["version"], 2);
  EXPECT_EQ(e["data"]["note"], "STOPPED seen");
  EXPECT_EQ(e["data"]["execution_stopped"], true);
}

TEST(HoldRelease, SecondReleaseIsAnInvalidTransition) {
  Given g;
  g.run(place_cmd("h1", "orders", kExecutionStateUnknown));
  g.run(release_cmd("h1", "stopped", true));
  const holds::Hold before = g.state.holds.by_id.at("h1");
  Decision d = g.run(release_cmd("h1", "again", true));

  ASSERT_NO_FATAL_FAILURE(expect_refused(d, 409, "invalid_transition"));
  EXPECT_EQ(d.rejection->extra["state"], "released");
  EXPECT_EQ(d.rejection->extra["allowed"], nlohmann::json::array());
  EXPECT_EQ(g.state.holds.by_id.at("h1"), before);
}

TEST(HoldRelease, OutcomeOtherThanSucceededOrFailedIsRefused) {
  Given g;
  g.run(place_cmd("h1", "orders", kResultUnknown));
  Decision d = g.run(release_cmd("h1", "checked", std::nullopt, "CANCELLED"));
  expect_refused_naming_field(d, 422, "invalid_field", "outcome");
}

TEST(HoldRelease, OutcomeWithoutAStaleAttemptToResolveIsRefused) {
  Given g;
  g.run(place_cmd("h1", "orders", kResultUnknown));
  Decision d = g.run(release_cmd("h1", "checked", std::nullopt, "SUCCEEDED"));
  expect_refused_naming_field(d, 422, "invalid_field", "outcome");
  EXPECT_FALSE(g.state.holds.by_id.at("h1").released);
}

// Given hold h1 placed on attempt 2 of job j1 ("orders"), and that attempt
// then STALE with h1 as the hold placed at staleness.
void given_stale_attempt_with_hold(Given& g, const std::string& kind) {
  given_job(g, "j1", "orders", 2, jobs::AttemptState::kRunning);
  Decision placed = g.run(place_cmd("h1", "orders", kind, "lease expired", "j1"));
  ASSERT_FALSE(placed.rejection) << placed.rejection->message;
  jobs::Attempt& a = g.state.jobs.by_id.at("j1").latest();
  a.state = jobs::AttemptState::kStale;
  a.stale_hold_id = "h1";
}

TEST(HoldRelease, HoldOfAStaleAttemptWithoutOutcomeIsRefused) {
  Given g;
  given_stale_attempt_with_hold(g, kExecutionStateUnknown);
  Decision d = decide(g.state, release_cmd("h1", "task STOPPED", true), g.ctx());

  ASSERT_NO_FATAL_FAILURE(expect_refused_naming_field(d, 422, "missing_field", "outcome"));
  EXPECT_NE(d.rejection->message.find("STALE"), std::string::npos) << d.rejection->message;
}

TEST(HoldRelease, HoldOfAStaleAttemptWithOutcomeResolvesThatAttempt) {
  Given g;
  given_stale_attempt_with_hold(g, kExecutionStateUnknown);
  Decision d = decide(g.state, release_cmd("h1", "task STOPPED, exit 1", true, "FAILED"), g.ctx());

  ASSERT_FALSE(d.rejection) << d.rejection->message;
  EXPECT_EQ(Given::types(d), (std::vector<std::string>{"HoldReleased", "AttemptResolved"}));
  EXPECT_EQ(d.events[0].stream, "hold/h1");
  EXPECT_EQ(d.events[0].payload.AsHoldReleased()->outcome, "FAILED");
  EXPECT_TRUE(d.events[0].payload.AsHoldReleased()->execution_stopped);
  EXPECT_EQ(d.events[1].stream, "job/j1");
  const fb::AttemptResolvedT* r = d.events[1].payload.AsAttemptResolved();
  EXPECT_EQ(r->attempt, 2);
  EXPECT_EQ(r->outcome, "FAILED");
  EXPECT_EQ(r->evidence, "hold_release");
  EXPECT_EQ(r->hold_id, "h1");
  EXPECT_FALSE(r->has_exit_code);
}

TEST(HoldRelease, ResultUnknownHoldOfAStaleAttemptNeedsOutcomeButNoConfirmedStop) {
  Given g;
  given_stale_attempt_with_hold(g, kResultUnknown);
  Decision without = decide(g.state, release_cmd("h1", "rows checked"), g.ctx());
  expect_refused_naming_field(without, 422, "missing_field", "outcome");

  Decision with =
      decide(g.state, release_cmd("h1", "rows checked", std::nullopt, "SUCCEEDED"), g.ctx());
  ASSERT_FALSE(with.rejection) << with.rejection->message;
  EXPECT_EQ(Given::types(with), (std::vector<std::string>{"HoldReleased", "AttemptResolved"}));
  EXPECT_EQ(with.events[1].payload.AsAttemptResolved()->outcome, "SUCCEEDED");
}

TEST(HoldRelease, ConfirmedStopIsCheckedBeforeTheOutcome) {
  Given g;
  given_stale_attempt_with_hold(g, kExecutionStateUnknown);
  Decision d = decide(g.state, release_cmd("h1", "checked", std::nullopt, "SUCCEEDED"), g.ctx());
  expect_refused_naming_field(d, 422, "invalid_field", "execution_stopped");
}

TEST(HoldRelease, AnOperatorsHoldOnAStaleAttemptNeedsAnOutcomeAndResolvesIt) {
  // Given an operator's hold on j1's attempt 2, then attempt 2 STALE with its own hold h2.
  Given g;
  given_job(g, "j1", "orders", 2, jobs::AttemptState::kRunning);
  g.run(place_cmd("op", "orders", kResultUnknown, "suspicious output", "j1"));
  g.run(place_cmd("h2", "orders", kExecutionStateUnknown, "lease expired", "j1"));
  jobs::Attempt& a = g.state.jobs.by_id.at("j1").latest();
  a.state = jobs::AttemptState::kStale;
  a.stale_hold_id = "h2";

  Decision plain = decide(g.state, release_cmd("op", "output fine"), g.ctx());
  expect_refused_naming_field(plain, 422, "missing_field", "outcome");

  Decision with_outcome = g.run(release_cmd("op", "output fine", std::nullopt, "SUCCEEDED"));
  ASSERT_FALSE(with_outcome.rejection) << with_outcome.rejection->message;
  EXPECT_EQ(Given::types(with_outcome),
            (std::vector<std::string>{"HoldReleased", "AttemptResolved"}));
  EXPECT_EQ(with_outcome.events[1].payload.AsAttemptResolved()->hold_id, "op");
  EXPECT_EQ(g.state.jobs.by_id.at("j1").latest().state, jobs::AttemptState::kSucceeded);

  // The engine's own hold stays until released, and its attempt is no longer STALE.
  Decision late = decide(g.state, release_cmd("h2", "stopped", true, "FAILED"), g.ctx());
  expect_refused_naming_field(late, 422, "invalid_field", "outcome");
  Decision h2 = g.run(release_cmd("h2", "stopped", true));
  ASSERT_FALSE(h2.rejection) << h2.rejection->message;
  EXPECT_EQ(Given::types(h2), std::vector<std::string>{"HoldReleased"});
}

TEST(HoldRelease, HoldOfAnAttemptNoLongerStaleNeedsNoOutcome) {
  Given g;
  given_stale_attempt_with_hold(g, kResultUnknown);
  g.state.jobs.by_id.at("j1").latest().state = jobs::AttemptState::kSucceeded;
  Decision d = g.run(release_cmd("h1", "already resolved"));
  ASSERT_FALSE(d.rejection) << d.rejection->message;
  EXPECT_EQ(Given::types(d), std::vector<std::string>{"HoldReleased"});
}

}  // namespace
}  // namespace runledger::testing

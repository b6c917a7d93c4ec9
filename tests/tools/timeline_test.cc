// runledger timeline: a job's life for a person, with who held its target,
// the holds on it and its lease windows; connectors and holds by their own
// stream.
#include <gtest/gtest.h>

#include "tests/tools/tools_test_support.h"

namespace runledger::testing {
namespace {

// Asserts that each expected fragment sits on a line of its own, in order
// (several fragments in one string must all be on that one line).
void expect_lines_in_order(const std::string& out,
                           const std::vector<std::vector<std::string>>& expected) {
  auto lines = lines_of(out);
  size_t at = 0;
  for (const auto& fragments : expected) {
    bool found = false;
    for (; at < lines.size() && !found; ++at) {
      found = true;
      for (const auto& f : fragments) found = found && lines[at].find(f) != std::string::npos;
    }
    ASSERT_TRUE(found) << "no line with '" << fragments.front() << "' after line " << at << " in:\n"
                       << out;
  }
}

// ja holds target T while jb waits; jb then runs, its lease runs out while
// RUNNING (STALE, a hold is placed) and an operator releases the hold saying
// the run SUCCEEDED.
class JobTimeline : public ::testing::Test {
 protected:
  void SetUp() override {
    rig_.run(enqueue("ja", "T"));
    rig_.run(claim("ja", "w1", "token-a"));
    rig_.run(enqueue("jb", "T"));
    rig_.run(jobs::Start{"ja", "token-a", "exec-a"});
    for (const char* step : {"A", "B"}) {
      rig_.run(jobs::StepStart{"ja", step, "token-a"});
      rig_.run(jobs::StepDone{"ja", step, "token-a", ""});
    }
    ASSERT_EQ(rig_.run(claim("jb", "w2", "token-b", 10)).status, 200);
    rig_.run(jobs::Start{"jb", "token-b", "exec-b"});
    rig_.clock().advance_ms(11'000);
    rig_.tick();
    hold_ = rig_.open_hold_of("jb");
    ASSERT_FALSE(hold_.empty());
    holds::ReleaseHold release{hold_, "the target was checked by hand", true, "SUCCEEDED"};
    ASSERT_EQ(rig_.run(release, "operator").status, 200);
  }
  EngineRig rig_;
  std::string hold_;
};

TEST_F(JobTimeline, ShowsTheTransitionsHoldersHoldsAndLeaseWindows) {
  CliResult r = run_cli({"timeline", "job/jb", "--data", rig_.data()});
  ASSERT_EQ(r.code, 0) << r.err;
  expect_lines_in_order(
      r.out,
      {{"+0.000s", "tester", "JobEnqueued attempt 1: (none) -> QUEUED", "target=T"},
       {"target T is held by job ja"},
       {"+5.000s", "job/ja AttemptSucceeded: target T freed by job ja"},
       {"+1.000s", "JobLeased attempt 1: QUEUED -> LEASED", "worker=w2", "lease_s=10"},
       {"JobStarted attempt 1: LEASED -> RUNNING", "execution_handle=exec-b"},
       {"+11.000s", "system", "LeaseExpired attempt 1: RUNNING ", "state=RUNNING"},
       {"AttemptStale attempt 1: RUNNING -> STALE", "cause=lease_expired", "hold_id=" + hold_},
       {"hold/" + hold_ + " HoldPlaced: (none) -> open", "kind=EXECUTION_STATE_UNKNOWN"},
       {"operator", "hold/" + hold_ + " HoldReleased: open -> released", "execution_stopped=true",
        "outcome=SUCCEEDED"},
       {"AttemptResolved attempt 1: STALE -> SUCCEEDED", "evidence=hold_release"},
       {"lease windows:"},
       {"attempt 1  worker w2", "(12.000s) ended by LeaseExpired"}});
}

TEST_F(JobTimeline, ABareJobIdNamesTheJob) {
  CliResult bare = run_cli({"timeline", "jb", "--data", rig_.data()});
  CliResult named = run_cli({"timeline", "job/jb", "--data", rig_.data()});
  ASSERT_EQ(bare.code, 0) << bare.err;
  EXPECT_EQ(bare.out, named.out);
}

TEST_F(JobTimeline, TheHolderSeesItsOwnLeaseWindowEndWithTheAttempt) {
  CliResult r = run_cli({"timeline", "ja", "--data", rig_.data()});
  ASSERT_EQ(r.code, 0) << r.err;
  expect_lines_in_order(r.out, {{"JobLeased attempt 1: QUEUED -> LEASED", "worker=w1"},
                                {"StepSucceeded attempt 1: RUNNING", "step=B"},
                                {"AttemptSucceeded attempt 1: RUNNING -> SUCCEEDED", "worker=w1"},
                                {"attempt 1  worker w1", "ended by AttemptSucceeded"}});
  EXPECT_EQ(r.out.find("job/jb"), std::string::npos)
      << "jb never held the target while ja was live:\n"
      << r.out;
}

TEST(Timeline, AYieldShowsTheAttemptHandedBackAndTheNextOne) {
  EngineRig rig;
  rig.run(enqueue("j1", "T"));
  ASSERT_EQ(rig.run(claim("j1", "w1", "token-1")).status, 200);
  rig.run(jobs::Start{"j1", "token-1", "exec-1"});
  rig.run(jobs::StepStart{"j1", "A", "token-1"});
  rig.run(jobs::StepDone{"j1", "A", "token-1", ""});
  ASSERT_EQ(rig.run(jobs::Yield{"j1", "token-1", "redeploy"}).status, 200);
  ASSERT_EQ(rig.run(claim("j1", "w2", "token-2")).status, 200);
  CliResult r = run_cli({"timeline", "job/j1", "--data", rig.data()});
  ASSERT_EQ(r.code, 0) << r.err;
  expect_lines_in_order(r.out, {{"AttemptYielded attempt 1: RUNNING -> YIELDED", "worker=w1",
                                 "reason=redeploy", "next_attempt=2", "reused_steps=A"},
                                {"JobLeased attempt 2: QUEUED -> LEASED", "worker=w2"},
                                {"lease windows:"},
                                {"attempt 1  worker w1", "ended by AttemptYielded"},
                                {"attempt 2  worker w2", "open"}});
}

TEST(Timeline, AStepsObservedExitShowsTheStep) {
  EngineRig rig;
  rig.run(enqueue("j1", "T"));
  ASSERT_EQ(rig.run(claim("j1", "w1", "token-1")).status, 200);
  rig.run(jobs::Start{"j1", "token-1", "exec-1"});
  rig.run(jobs::StepStart{"j1", "A", "token-1"});
  rig.run(jobs::StepDone{"j1", "A", "token-1", ""});
  rig.run(jobs::StepStart{"j1", "B", "token-1"});
  jobs::Reattach exited{"j1", "w2", "exec-1", "exited", 0, std::nullopt, "token-2"};
  exited.step = "B";
  ASSERT_EQ(rig.run(exited).status, 200);
  CliResult r = run_cli({"timeline", "job/j1", "--data", rig.data()});
  ASSERT_EQ(r.code, 0) << r.err;
  expect_lines_in_order(r.out, {{"StepSucceeded attempt 1: RUNNING", "step=B", "worker=w2"},
                                {"AttemptResolved attempt 1: RUNNING -> SUCCEEDED", "step=B",
                                 "exit_code=0", "evidence=exited", "worker=w2"}});
}

TEST(Timeline, ConnectorShowsStatusAndSyncStatus) {
  EngineRig rig;
  rig.run(connectors::Create{"c1", "alpha", 0});
  rig.run(connectors::StartSync{"c1", "s1"});
  rig.run(connectors::ReportFailed{"c1", "s1", "disk full"});
  CliResult r = run_cli({"timeline", "connector/c1", "--data", rig.data()});
  ASSERT_EQ(r.code, 0) << r.err;
  expect_lines_in_order(
      r.out, {{"ConnectorCreated: (none) -> active/idle", "name=alpha"},
              {"SyncStarted: active/idle -> active/running", "sync_id=s1", "trigger=manual"},
              {"SyncFailed: active/running -> error/idle", R"(error="disk full")"}});
}

// A target, a worker and an actor are the client's text: an escape sequence
// in them is shown as \x1b..., never sent to the reader's terminal.
TEST(Timeline, ControlBytesInTheClientsTextAreShownEscaped) {
  EngineRig rig;
  rig.run(enqueue("j1", "t\x1b[2Jgone"));
  ASSERT_EQ(rig.run(claim("j1", "w\x1b[H", "token-1")).status, 200);
  CliResult r = run_cli({"timeline", "job/j1", "--data", rig.data()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
  expect_lines_in_order(r.out, {{"JobEnqueued", "target=t\\x1b[2Jgone"},
                                {"JobLeased", "worker=w\\x1b[H"},
                                {"attempt 1  worker w\\x1b[H"}});
}

TEST(Timeline, UnknownEntityExitsOne) {
  EngineRig rig;
  rig.run(enqueue("j1", "t1"));
  CliResult r = run_cli({"timeline", "hold/none", "--data", rig.data()});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("hold/none does not exist"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace runledger::testing

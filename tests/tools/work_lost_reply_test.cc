// runledger work against a runledgerd behind a proxy that loses replies: a
// claim, a start, a step's done and a step's failed whose replies are lost
// are sent again under the same Idempotency-Key and applied once; a runner
// that gave up on a lost reply and is started again on the same state folder
// sends the journaled claim or report again and is answered from the kept
// reply, never with a second lease or a second report.
#include <gtest/gtest.h>

#include "tests/tools/work_proxy.h"
#include "tests/tools/work_rig.h"

namespace runledger::testing {
namespace {

using nlohmann::json;

class WorkLostReplyTest : public ::testing::Test {
 protected:
  WorkRig rig_;
  ReplyDroppingProxy proxy_{rig_.server().port()};
};

TEST_F(WorkLostReplyTest, LostClaimStartAndDoneRepliesAreAppliedOnce) {
  ASSERT_TRUE(rig_.enqueue("j1", {"A"}, "t1"));
  proxy_.drop_replies("/v1/jobs/claim");
  proxy_.drop_replies("/v1/jobs/j1/start ");
  proxy_.drop_replies("/v1/jobs/j1/steps/A/start ");
  proxy_.drop_replies("/v1/jobs/j1/steps/A/done ");
  CliResult r =
      run_cli(WorkRig::work_args(proxy_.url(), rig_.path("state"), {"--once", "--step", "A=true"}));

  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(proxy_.dropped(), 4);
  EXPECT_EQ(rig_.job("j1").value("state", ""), "SUCCEEDED");
  const auto counts = rig_.event_counts("j1");
  for (const char* type : {"JobLeased", "JobStarted", "StepStarted", "StepSucceeded"}) {
    EXPECT_EQ(counts.count(type) ? counts.at(type) : 0, 1) << type;
  }
}

TEST_F(WorkLostReplyTest, ALostFailedReplyIsAppliedOnce) {
  ASSERT_TRUE(rig_.enqueue("j1", {"A"}, "t1", /*max_attempts=*/3));
  proxy_.drop_replies("/v1/jobs/j1/steps/A/failed ");
  CliResult r = run_cli(WorkRig::work_args(proxy_.url(), rig_.path("state"),
                                           {"--once", "--step", "A=sh -c 'exit 75'"}));

  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(proxy_.dropped(), 1);
  const json j = rig_.job("j1");
  // One failure, one retry queued: a second failed would have used attempt 2.
  EXPECT_EQ(j.value("attempt", 0), 2) << j.dump();
  EXPECT_EQ(j.value("state", ""), "QUEUED") << j.dump();
  const auto counts = rig_.event_counts("j1");
  EXPECT_EQ(counts.count("StepFailed") ? counts.at("StepFailed") : 0, 1);
}

TEST_F(WorkLostReplyTest, ARunnerStartedAgainSendsTheJournaledClaimAgain) {
  ASSERT_TRUE(rig_.enqueue("j1", {"A"}, "t1"));
  // Every try of the first runner's claim is acted on, none answered.
  proxy_.drop_replies("/v1/jobs/claim", 100);
  CliResult first =
      run_cli(WorkRig::work_args(proxy_.url(), rig_.path("state"), {"--once", "--step", "A=true"}));
  EXPECT_EQ(first.code, 69) << first.err;
  EXPECT_GE(proxy_.dropped(), 1);
  EXPECT_EQ(rig_.job("j1").value("state", ""), "LEASED");

  // Straight to the server now: the journaled claim gets its first reply,
  // the lease it already holds, and runs the job under it.
  CliResult second = run_cli(
      WorkRig::work_args(rig_.server().url(), rig_.path("state"), {"--once", "--step", "A=true"}));
  EXPECT_EQ(second.code, 0) << second.err;
  EXPECT_EQ(rig_.job("j1").value("state", ""), "SUCCEEDED");
  const auto counts = rig_.event_counts("j1");
  EXPECT_EQ(counts.count("JobLeased") ? counts.at("JobLeased") : 0, 1);
}

TEST_F(WorkLostReplyTest, ARunnerStartedAgainSendsTheJournaledReportAgain) {
  ASSERT_TRUE(rig_.enqueue("j1", {"A", "B"}, "t1"));
  proxy_.drop_replies("/v1/jobs/j1/steps/A/done ", 100);
  CliResult first = run_cli(
      WorkRig::work_args(proxy_.url(), rig_.path("state"),
                         {"--once", "--lease-s", "30", "--step", "A=true", "--step", "B=true"}));
  EXPECT_EQ(first.code, 75) << first.err;
  EXPECT_GE(proxy_.dropped(), 1);
  EXPECT_EQ(rig_.job("j1")["steps"][0].value("state", ""), "DONE");

  // The report is answered from the kept reply; B is handed back at the
  // boundary (yield) and run by the next claim.
  CliResult second = run_cli(WorkRig::work_args(
      rig_.server().url(), rig_.path("state"), {"--once", "--step", "A=true", "--step", "B=true"}));
  EXPECT_EQ(second.code, 0) << second.err;
  const json j = rig_.job("j1");
  EXPECT_EQ(j.value("state", ""), "SUCCEEDED") << j.dump();
  const auto counts = rig_.event_counts("j1");
  EXPECT_EQ(counts.count("StepSucceeded") ? counts.at("StepSucceeded") : 0, 2);
}

}  // namespace
}  // namespace runledger::testing

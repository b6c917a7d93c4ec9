// The rules of docs/worker.md "How a step ends", given/when/then: the first
// rule that applies decides how a step's end is reported.
#include <csignal>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "worker/step_outcome.h"

namespace runledger::worker {
namespace {

using Kind = StepReport::Kind;

const std::set<int> kRetryable = {75};

StepExit exited(int code, std::optional<std::string> file = std::nullopt) {
  StepExit e;
  e.exit_code = code;
  e.duration_ms = 1500;
  e.result_file = std::move(file);
  e.output_tail = "last lines\n";
  return e;
}

TEST(StepOutcome, AnUnknownOutcomeInTheResultFileWinsOverTheExit) {
  for (int code : {0, 1, 75}) {
    StepReport r =
        step_report(exited(code, R"({"outcome":"result_unknown","detail":"d"})"), kRetryable);
    EXPECT_EQ(r.kind, Kind::kOutcomeUnknown) << code;
    EXPECT_EQ(r.unknown_kind, "RESULT_UNKNOWN");
    EXPECT_EQ(r.detail, "d");
  }
  EXPECT_EQ(step_report(exited(0, R"({"outcome":"execution_unknown"})"), kRetryable).unknown_kind,
            "EXECUTION_STATE_UNKNOWN");
}

TEST(StepOutcome, ExitZeroIsDoneWithItsFigures) {
  StepExit e = exited(0, R"({"output":{"rows":3}})");
  e.orphans_killed = 2;
  StepReport r = step_report(e, kRetryable);
  ASSERT_EQ(r.kind, Kind::kDone);
  EXPECT_EQ(r.output.value("exit_code", -1), 0);
  EXPECT_EQ(r.output.value("duration_ms", 0), 1500);
  EXPECT_EQ(r.output["result"].value("rows", 0), 3);
  EXPECT_EQ(r.output.value("orphans_killed", 0), 2);
  EXPECT_TRUE(step_report(exited(0), kRetryable).output["result"].is_null());
}

TEST(StepOutcome, AnUnreadableResultFileFailsASuccessNotRetryable) {
  for (const std::string& file : {std::string("not json"), std::string("[1]"),
                                  "{\"output\":\"" + std::string(17000, 'x') + "\"}"}) {
    StepReport r = step_report(exited(0, file), kRetryable);
    EXPECT_EQ(r.kind, Kind::kFailed);
    EXPECT_EQ(r.error, "invalid result file");
    EXPECT_FALSE(r.retryable);
  }
}

TEST(StepOutcome, ARetryableExitOrFileIsARetryableFailure) {
  EXPECT_TRUE(step_report(exited(75), kRetryable).retryable);
  EXPECT_TRUE(step_report(exited(2, R"({"retryable":true})"), kRetryable).retryable);
  EXPECT_FALSE(step_report(exited(2), kRetryable).retryable);
}

TEST(StepOutcome, AFailureSaysHowItEndedThenTheFilesErrorThenTheTail) {
  StepReport r = step_report(exited(3, R"({"error":"no rows"})"), kRetryable);
  EXPECT_EQ(r.error, "exit 3 after 1.5s: no rows\nlast lines\n");
  StepExit killed;
  killed.signal = SIGKILL;
  killed.duration_ms = 200;
  StepReport k = step_report(killed, kRetryable);
  EXPECT_EQ(k.kind, Kind::kFailed);
  EXPECT_EQ(k.error, "killed by SIGKILL after 0.2s");
  EXPECT_FALSE(k.retryable);
}

}  // namespace
}  // namespace runledger::worker

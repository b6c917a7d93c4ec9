// The kill -9 test (docs/performance.md "Reliability"): W1 and connector traffic
// against a real runledgerd, SIGKILLed at random moments and restarted on the
// same folder; see crash_driver.h for what each cycle checks.
// The short form runs in CI; RUNLEDGER_CRASH_CYCLES=1000 runs the full form
// (with RUNLEDGER_CRASH_FULL_CHECK_EVERY=25: the whole log is checked every
// 25 cycles, each cycle's new events every cycle), RUNLEDGER_CRASH_SEED=N
// repeats a run's schedule.
#include <iostream>

#include <gtest/gtest.h>

#include "tests/faults/crash_driver.h"

namespace runledger::testing {
namespace {

constexpr int kShortFormCycles = 3;

TEST(CrashTest, EveryAcknowledgedCommandSurvivesSigkillsAndNoneIsHalfApplied) {
  CrashOptions options;
  options.seed = crash_seed_from_env();
  options.cycles = crash_cycles_from_env(kShortFormCycles);
  options.full_check_every = crash_full_check_every_from_env(1);
  std::cout << "crash seed " << options.seed << " (RUNLEDGER_CRASH_SEED=" << options.seed
            << " repeats it), " << options.cycles << " cycles" << std::endl;

  CrashReport report = CrashDriver(options).run();

  std::cout << report.summary() << std::endl;
  RecordProperty("seed", std::to_string(report.seed));
  RecordProperty("cycles", report.cycles);
  RecordProperty("kills", report.kills);
  RecordProperty("acknowledged", static_cast<int>(report.commands.acked));
  for (const auto& p : report.problems) ADD_FAILURE() << p;
  EXPECT_EQ(report.cycles, options.cycles) << report.summary();
  EXPECT_GE(report.kills, options.cycles);
  // The kills must have caught commands in flight, or nothing was tested.
  EXPECT_GT(report.commands.acked, 0u);
  EXPECT_GT(report.commands.unknown, 0u) << "no kill left a command unanswered";
  EXPECT_GT(report.events, 0u);
}

}  // namespace
}  // namespace runledger::testing

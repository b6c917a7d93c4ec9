// Deterministic simulation of the engine (docs/performance.md, Reliability): random
// workers, operators and connector sync loops drive the engine from a seed,
// with crashes, skipped heartbeats, lease expiries, clock jumps, failed
// writes and restarts; after every command the invariants of docs/domain.md
// section 4 hold and memory equals fold(log). See sim_runner.h for the
// checks.
//
// Short form (CI): a few seeds, 20,000 commands in all. After every command
// each stream it touched is compared with fold(log); the whole state every 50
// steps (the full form: every 1,000).
// Full form:  RUNLEDGER_SIM_COMMANDS=1000000 (split over the seeds)
// One seed:   RUNLEDGER_SIM_SEED=<n> (all commands on that seed: replays a failure)
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/engine/sim_invariants.h"
#include "tests/engine/sim_runner.h"
#include "tests/support/test_support.h"

namespace runledger::testing {
namespace {

const std::vector<uint64_t> kShortSeeds = {20261130, 7, 424242, 31337};
constexpr size_t kShortCommands = 20'000;
// Per seed: from here on every kind of command must have come up.
constexpr size_t kCoverageCommandsMin = 5'000;
// Beyond this many commands per seed, the whole-state checks run less often.
constexpr size_t kLongRunCommands = 100'000;
constexpr size_t kReproducibleCommands = 3'000;
constexpr size_t kReproducibleCommandsMin = 200;
constexpr uint64_t kReproducibleSeed = 8;

// Commands of each run of the reproducibility check: a quarter of the short
// form's, so that a suite cut short (RUNLEDGER_SIM_COMMANDS, as the
// sanitizer pass does) cuts this check too; never more than
// kReproducibleCommands.
size_t reproducible_commands() {
  const size_t quarter = env_number("RUNLEDGER_SIM_COMMANDS", kShortCommands) / 4;
  return std::clamp(quarter, kReproducibleCommandsMin, kReproducibleCommands);
}

SimOptions options_for(uint64_t seed, size_t commands) {
  SimOptions o;
  o.seed = seed;
  o.commands = commands;
  if (commands > kLongRunCommands) {
    o.digest_check_every = 1'000;
    o.full_check_every = 1'000;
    o.replay_check_every = 100'000;
  }
  return o;
}

void print_figures(const SimReport& r, double seconds) {
  std::cout << "[ sim      ] seed " << r.seed << ": " << r.commands << " commands in " << r.steps
            << " steps, " << r.events << " events, " << seconds << " s; " << r.invariant_checks
            << " invariant checks, " << r.stream_fold_checks << " stream fold checks, "
            << r.full_fold_checks << " whole-state fold checks, " << r.replays
            << " replays from scratch; " << r.restarts << " restarts, " << r.write_faults
            << " failed writes, " << r.timer_fires << " timer firings; replies:" << r.coverage()
            << "\n";
}

TEST(Simulation, InvariantsHoldAfterEveryCommandAndMemoryEqualsTheLog) {
  const size_t total = env_number("RUNLEDGER_SIM_COMMANDS", kShortCommands);
  std::vector<uint64_t> seeds = kShortSeeds;
  if (std::getenv("RUNLEDGER_SIM_SEED")) seeds = {env_number("RUNLEDGER_SIM_SEED", 0)};
  size_t all_commands = 0;
  for (uint64_t seed : seeds) {
    auto start = std::chrono::steady_clock::now();
    SimReport r = simulate(options_for(seed, total / seeds.size()));
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    print_figures(r, s);
    all_commands += r.commands;
    ASSERT_EQ(r.failure, "") << "replay with RUNLEDGER_SIM_SEED=" << seed
                             << " RUNLEDGER_SIM_COMMANDS=" << total / seeds.size()
                             << "; replies so far:" << r.coverage();
    // Every kind of event the engine can record came up, so the checks saw
    // them (a run much shorter than the short form may not get to all).
    if (total / seeds.size() < kCoverageCommandsMin) continue;
    for (const char* name : {"job.claim", "job.reattach", "job.outcome_unknown", "hold.release",
                             "connector.abort", "connector.failed"}) {
      EXPECT_TRUE(r.outcomes.count(name)) << name << " never sent:" << r.coverage();
    }
  }
  EXPECT_GE(all_commands, total);
}

TEST(Simulation, TheSameSeedGivesTheSameLog) {
  const size_t commands = reproducible_commands();
  SimReport first = simulate(options_for(kReproducibleSeed, commands));
  SimReport second = simulate(options_for(kReproducibleSeed, commands));
  SimReport other = simulate(options_for(kReproducibleSeed + 1, commands));
  ASSERT_EQ(first.failure, "");
  ASSERT_EQ(second.failure, "");
  ASSERT_EQ(first.fingerprint.error, "");
  EXPECT_GT(first.events, commands / 4);
  EXPECT_EQ(first.events, second.events);
  EXPECT_EQ(first.fingerprint.last_event_hash, second.fingerprint.last_event_hash)
      << "seed " << kReproducibleSeed << " gave two different logs";
  // The fingerprint tells runs apart: another seed, another log.
  EXPECT_NE(first.fingerprint.last_event_hash, other.fingerprint.last_event_hash);
}

// The checks can fail: a state that breaks a rule is reported under its name.
TEST(Simulation, InvariantCheckerNamesTheRuleAStateBreaks) {
  Given g;
  g.run(enqueue_command("j1", "load", "orders"));
  g.run(enqueue_command("j2", "load", "orders"));
  g.run(jobs::Claim{"w1", {"load"}, 30, lease_token("a")});
  InvariantChecker checker;
  ASSERT_EQ(checker.check(g.state), "");

  // Given a second attempt on the same target that became LEASED behind the indexes' back.
  State two_holders = g.state;
  two_holders.jobs.by_id["j2"].latest().state = jobs::AttemptState::kLeased;
  std::string found = checker.check(two_holders);
  EXPECT_NE(found.find("invariant 1"), std::string::npos) << found;
  EXPECT_NE(found.find("job indexes"), std::string::npos) << found;

  // Given a finished attempt whose result is later flipped.
  g.run(jobs::Cancel{"j2", "not needed"});
  InvariantChecker watcher;
  ASSERT_EQ(watcher.check(g.state), "");
  State flipped = g.state;
  flipped.jobs.by_id["j2"].latest().error = "rewritten";
  found = watcher.check(flipped);
  EXPECT_NE(found.find("invariant 2"), std::string::npos) << found;

  // Given a STALE attempt without its hold.
  State unheld = g.state;
  jobs::Attempt& a = unheld.jobs.by_id["j1"].latest();
  a.state = jobs::AttemptState::kStale;
  found = InvariantChecker().check(unheld);
  EXPECT_NE(found.find("stale hold"), std::string::npos) << found;
}

}  // namespace
}  // namespace runledger::testing

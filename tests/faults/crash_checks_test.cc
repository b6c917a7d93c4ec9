// The crash test's log checks (crash_checks.h) on forged logs: a log that
// goes on as it should passes each of them, and each damage a kill could do
// (an event lost or changed, a gap, a half-applied or twice-applied command,
// an acknowledged command missing) is reported by the check meant for it.
// They are the crash test's positive control: a check that cannot fail
// would let the kill -9 test pass on a server that loses work.
#include "tests/faults/crash_checks.h"

#include <gtest/gtest.h>

namespace runledger::testing {
namespace {

using nlohmann::json;

json forged_event(uint64_t seq, const std::string& stream, uint64_t version,
                  const std::string& type, const std::string& command, int attempt = 1) {
  return json{{"seq", seq},   {"stream", stream},      {"version", version},
              {"type", type}, {"command_id", command}, {"data", {{"attempt", attempt}}}};
}

// W1's first commands on job/a, then on job/b: seqs 1-4.
std::vector<json> first_cycle() {
  return {forged_event(1, "job/a", 1, "JobEnqueued", "c1"),
          forged_event(2, "job/a", 2, "JobLeased", "c2"),
          forged_event(3, "job/b", 1, "JobEnqueued", "c3"),
          forged_event(4, "job/a", 3, "JobStarted", "c4")};
}

// What the next cycle wrote after seq 4: job/b's lease, and a step of job/a
// that fails retryably (a command of three events).
std::vector<json> second_cycle() {
  return {forged_event(5, "job/a", 4, "StepStarted", "c5"),
          forged_event(6, "job/b", 2, "JobLeased", "c6"),
          forged_event(7, "job/a", 5, "StepFailed", "c7"),
          forged_event(8, "job/a", 6, "AttemptFailed", "c7"),
          forged_event(9, "job/a", 7, "RetryScheduled", "c7", 2)};
}

LogHistory seen_after_first_cycle() {
  LogHistory seen;
  seen.add(LogWindow(0, first_cycle()));
  return seen;
}

// The window a restart after the second cycle reads: from seq 2 on.
std::vector<json> window_events(std::vector<json> second = second_cycle()) {
  std::vector<json> events = first_cycle();
  events.erase(events.begin(), events.begin() + 2);
  events.insert(events.end(), second.begin(), second.end());
  return events;
}

Problems all_log_checks(const LogHistory& seen, const LogWindow& log) {
  Problems found;
  check_prefix_kept(seen, log, &found);
  check_gapless(seen, log, &found);
  check_commands_whole(seen, log, &found);
  return found;
}

// What `check` finds in the window a restart after the second cycle reads,
// with the second cycle as `second` has it.
Problems found_after_second_cycle(void (*check)(const LogHistory&, const LogWindow&, Problems*),
                                  const std::vector<json>& second) {
  Problems found;
  check(seen_after_first_cycle(), LogWindow(2, window_events(second)), &found);
  return found;
}

::testing::AssertionResult OneProblemSaying(const Problems& found, const std::string& words) {
  if (found.size() == 1 && found[0].find(words) != std::string::npos) {
    return ::testing::AssertionSuccess();
  }
  auto failure = ::testing::AssertionFailure() << "expected one problem saying \"" << words
                                               << "\", found " << found.size() << ":";
  for (const auto& p : found) failure << "\n  " << p;
  return failure;
}

Ack forged_ack(const std::string& stream, uint64_t version, std::set<std::string> last_types,
               int attempt = 1) {
  Ack a;
  a.what = "forged";
  a.stream = stream;
  a.version = version;
  a.last_types = std::move(last_types);
  a.attempt = attempt;
  return a;
}

TEST(CrashChecks, ALogThatGoesOnAsItShouldHasNoProblem) {
  const LogHistory seen = seen_after_first_cycle();
  const LogWindow log(2, window_events());
  EXPECT_EQ(all_log_checks(seen, log), Problems{});
  Problems found;
  check_acks_in_log(log,
                    std::vector<Ack>{forged_ack("job/b", 2, {"JobLeased"}),
                                     forged_ack("job/a", 7, {"RetryScheduled"}, 2)},
                    &found);
  EXPECT_EQ(found, Problems{});
}

TEST(CrashChecks, ALostEventIsReported) {
  const LogHistory seen = seen_after_first_cycle();
  std::vector<json> events = first_cycle();
  events.pop_back();  // seq 4, seen before the kill, is gone
  Problems found;
  check_prefix_kept(seen, LogWindow(0, events), &found);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].find("held 4 events before the kill"), std::string::npos) << found[0];
}

TEST(CrashChecks, AnEventChangedAcrossTheKillIsReported) {
  const LogHistory seen = seen_after_first_cycle();
  std::vector<json> events = window_events();
  events[1]["data"]["attempt"] = 2;  // seq 4
  Problems found;
  check_prefix_kept(seen, LogWindow(2, events), &found);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].find("seq 4 changed"), std::string::npos) << found[0];
}

TEST(CrashChecks, AGapInSeqsIsReported) {
  std::vector<json> second = second_cycle();
  second.erase(second.begin() + 1);  // seq 6
  EXPECT_TRUE(
      OneProblemSaying(found_after_second_cycle(&check_gapless, second), "where seq 6 belongs"));
}

TEST(CrashChecks, AStreamThatDoesNotGoOnFromItsLastVersionIsReported) {
  std::vector<json> second = second_cycle();
  second[1]["version"] = 3;  // job/b was at version 1 before the kill
  EXPECT_TRUE(
      OneProblemSaying(found_after_second_cycle(&check_gapless, second), "expected version 2"));
}

TEST(CrashChecks, AHalfAppliedCommandIsReported) {
  std::vector<json> second = second_cycle();
  second.resize(3);  // StepFailed without its AttemptFailed
  EXPECT_TRUE(OneProblemSaying(found_after_second_cycle(&check_commands_whole, second),
                               "not a whole command"));
}

TEST(CrashChecks, ACommandWrittenAgainAfterTheKillIsReported) {
  std::vector<json> second = second_cycle();
  second[1]["command_id"] = "c2";  // job/a's lease, written before the kill
  EXPECT_TRUE(
      OneProblemSaying(found_after_second_cycle(&check_commands_whole, second), "applied twice"));
}

TEST(CrashChecks, AnAcknowledgedCommandMissingOrOfAnotherTypeIsReported) {
  const LogWindow log(2, window_events());
  Problems found;
  check_acks_in_log(log,
                    std::vector<Ack>{forged_ack("job/b", 3, {"JobStarted"}),
                                     forged_ack("job/a", 4, {"StepSucceeded"}),
                                     forged_ack("job/a", 7, {"AttemptFailed"})},
                    &found);
  ASSERT_EQ(found.size(), 3u);
  EXPECT_NE(found[0].find("is not in the log"), std::string::npos) << found[0];
  EXPECT_NE(found[1].find("the log has"), std::string::npos) << found[1];
  EXPECT_NE(found[2].find("the log has"), std::string::npos) << found[2];
}

TEST(CrashChecks, AWindowCoversAStreamOnlyFromItsFirstVersionInIt) {
  const LogWindow log(2, window_events());
  EXPECT_FALSE(log.covers("job/a", 2));  // seq 2, before the window
  EXPECT_TRUE(log.covers("job/a", 3));
  EXPECT_TRUE(log.covers("job/a", 8));  // not written yet: reported missing
  EXPECT_FALSE(log.covers("job/c", 1));
}

}  // namespace
}  // namespace runledger::testing

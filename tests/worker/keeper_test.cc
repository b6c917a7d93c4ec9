// The keeper and the journal's process identity, driven directly: a step's
// exit recorded with its code, a step stopped on request recorded as
// stopped, what a step leaves in its session stopped and counted, and a
// process id that a reused pid, another boot or an exit cannot pass for.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "tests/support/subprocess.h"
#include "tests/support/test_support.h"
#include "worker/journal.h"
#include "worker/keeper.h"

namespace runledger::worker {
namespace {

using namespace std::chrono_literals;
using runledger::testing::TempDir;

std::vector<std::string> keeper_test_env() { return {"PATH=/usr/bin:/bin"}; }

// Waits up to 10 s for the step's record.
std::optional<StepRecord> wait_record(Keeper& k, const std::string& step) {
  for (int i = 0; i < 200; ++i) {
    if (auto r = k.record(step)) return r;
    k.wait_notice(50ms);
  }
  return std::nullopt;
}

TEST(KeeperTest, RecordsEachStepsExitCodeInTurn) {
  TempDir dir;
  std::unique_ptr<Keeper> k;
  ASSERT_TRUE(Keeper::spawn(dir.path(), /*detached=*/false, 1s, &k).ok());
  ASSERT_TRUE(k->run("A", {"/bin/sh", "-c", "echo out; exit 3"}, keeper_test_env()).ok());
  std::optional<StepRecord> a = wait_record(*k, "A");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->exit_code, 3);
  EXPECT_FALSE(a->stopped);
  EXPECT_EQ(runledger::testing::read_whole_file(step_file(dir.path(), "A", ".stdout")), "out\n");
  ASSERT_TRUE(k->run("B", {"/bin/true"}, keeper_test_env()).ok());
  std::optional<StepRecord> b = wait_record(*k, "B");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->exit_code, 0);
  k->finish();
  EXPECT_FALSE(k->alive());
}

TEST(KeeperTest, AStepStoppedOnRequestIsRecordedAsStopped) {
  TempDir dir;
  std::unique_ptr<Keeper> k;
  ASSERT_TRUE(Keeper::spawn(dir.path(), /*detached=*/false, 1s, &k).ok());
  ASSERT_TRUE(k->run("A", {"/bin/sleep", "30"}, keeper_test_env()).ok());
  std::this_thread::sleep_for(200ms);
  k->stop_step();
  std::optional<StepRecord> a = wait_record(*k, "A");
  ASSERT_TRUE(a.has_value());
  EXPECT_TRUE(a->stopped);
  EXPECT_EQ(a->signal, SIGTERM);
  EXPECT_EQ(a->code_for_reattach(), 128 + SIGTERM);
  k->finish();
}

TEST(KeeperTest, WhatAStepLeftInItsSessionIsStoppedAndCounted) {
  TempDir dir;
  std::unique_ptr<Keeper> k;
  ASSERT_TRUE(Keeper::spawn(dir.path(), /*detached=*/false, 1s, &k).ok());
  ASSERT_TRUE(
      k->run("A", {"/bin/sh", "-c", "sleep 30 & sleep 30 & exit 0"}, keeper_test_env()).ok());
  std::optional<StepRecord> a = wait_record(*k, "A");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->exit_code, 0);
  EXPECT_EQ(a->orphans_killed, 2);
  k->finish();
}

TEST(ProcessIdTest, ThisProcessIsAliveAndAReusedPidOrAnotherBootIsNot) {
  ProcessId self = ProcessId::of(::getpid());
  EXPECT_TRUE(self.alive());
  ProcessId reused = self;
  reused.start = "1";  // the same pid, started at another time: another process
  EXPECT_FALSE(reused.alive());
  ProcessId other_boot = self;
  other_boot.boot = "00000000-0000-0000-0000-000000000000";
  EXPECT_FALSE(other_boot.alive());
  EXPECT_EQ(ProcessId::from_json(self.to_json()).handle(), self.handle());
}

TEST(ProcessIdTest, AChildThatExitedIsNotAlive) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::pause();
    ::_exit(0);
  }
  std::this_thread::sleep_for(50ms);
  ProcessId child = ProcessId::of(pid);
  EXPECT_TRUE(child.alive());
  ::kill(pid, SIGKILL);
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(child.alive()) << "a zombie is not alive";
  int st = 0;
  ::waitpid(pid, &st, 0);
  EXPECT_FALSE(child.alive());
}

TEST(JournalFileTest, AFileWrittenWholeReadsBackAndAMissingOneIsNothing) {
  TempDir dir;
  const std::string path = dir.path() + "/attempt.json";
  EXPECT_FALSE(read_json_file(path).has_value());
  ASSERT_TRUE(write_json_durably(path, {{"job", "j1"}, {"attempt", 2}}).ok());
  std::optional<nlohmann::json> j = read_json_file(path);
  ASSERT_TRUE(j.has_value());
  EXPECT_EQ(j->value("attempt", 0), 2);
  {
    std::ofstream torn(path);
    torn << "{\"job\": ";
  }
  EXPECT_FALSE(read_json_file(path).has_value());
}

}  // namespace
}  // namespace runledger::worker

// runledger work's keeper and journal, one scenario each: a bound keeper
// stops the step when its runner dies and the next runner reports it
// RESULT_UNKNOWN; a step fenced while the server is away is reported with
// its exit once the server is back; SIGUSR1 names the slot's job, step and
// child; --log-format json writes JSON lines.
#include <dirent.h>
#include <signal.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "tests/tools/work_rig.h"

namespace runledger::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

class WorkKeeperTest : public ::testing::Test {
 protected:
  pid_t spawn_runner(const std::vector<std::string>& extra, const std::string& name) {
    std::vector<std::string> argv = {bin_path("runledger")};
    for (const auto& a : WorkRig::work_args(rig_.server().url(), rig_.path("state"), extra)) {
      argv.push_back(a);
    }
    return spawn_process(argv, clean_environment(), rig_.path(name + ".out"),
                         rig_.path(name + ".err"));
  }
  // Waits until the job's step `index` runs and its process is known.
  bool wait_step_running(const std::string& id) {
    for (int i = 0; i < 200; ++i) {
      const json j = rig_.job(id);
      if (j.contains("steps") && j["steps"][0].value("state", "") == "RUNNING" &&
          std::filesystem::exists(rig_.path("state/" + id + "-a1/step-A.pid"))) {
        return true;
      }
      std::this_thread::sleep_for(50ms);
    }
    return false;
  }
  // Whether the process the step's pid file names still runs.
  // Job j1's step A (`sleep 60`) running under a runner with `--lease-s
  // lease_s --fence-after 2s --grace 1s`, whose output goes to "first".
  void start_fenced_step(const std::string& lease_s, pid_t* runner) {
    ASSERT_TRUE(rig_.enqueue("j1", {"A"}, "t1"));
    *runner = spawn_runner({"--once", "--lease-s", lease_s, "--fence-after", "2s", "--grace", "1s",
                            "--step", "A=sleep 60"},
                           "first");
    ASSERT_TRUE(wait_step_running("j1")) << read_whole_file(rig_.path("first.err"));
  }
  bool step_process_runs(const std::string& id) {
    const json p =
        json::parse(read_whole_file(rig_.path("state/" + id + "-a1/step-A.pid")), nullptr, false);
    const pid_t pid = p.is_object() ? p.value("pid", 0) : 0;
    const std::string stat = read_whole_file("/proc/" + std::to_string(pid) + "/stat");
    const size_t close = stat.rfind(')');
    return pid > 0 && close != std::string::npos && stat[close + 2] != 'Z';
  }
  std::string open_hold_kind(const std::string& target) {
    const json h = rig_.get("/v1/holds?open=true&target=" + target);
    return h.contains("holds") && !h["holds"].empty() ? h["holds"][0].value("kind", "") : "";
  }

  WorkRig rig_;
};

TEST_F(WorkKeeperTest, ABoundKeeperStopsTheStepWhenItsRunnerDiesAndTheNextRunnerReportsIt) {
  ASSERT_TRUE(rig_.enqueue("j1", {"A"}, "t1"));
  const pid_t runner =
      spawn_runner({"--once", "--lease-s", "30", "--grace", "1s", "--step", "A=sleep 30"}, "first");
  ASSERT_TRUE(wait_step_running("j1")) << read_whole_file(rig_.path("first.err"));
  ::kill(runner, SIGKILL);
  wait_for_exit(runner);
  for (int i = 0; i < 60 && step_process_runs("j1"); ++i) std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(step_process_runs("j1"));

  CliResult again = run_cli(
      WorkRig::work_args(rig_.server().url(), rig_.path("state"), {"--once", "--step", "A=true"}));
  EXPECT_EQ(again.code, 0) << again.err;
  EXPECT_NE(again.err.find("settling"), std::string::npos) << again.err;
  const json j = rig_.job("j1");
  // Stopped mid-way under a lease still current: what it produced is unknown.
  EXPECT_EQ(j.value("state", ""), "STALE") << j.dump();
  EXPECT_EQ(open_hold_kind("t1"), "RESULT_UNKNOWN");
}

TEST_F(WorkKeeperTest, AFencedStepIsReportedWithItsExitOnceTheServerIsBack) {
  pid_t runner = 0;
  ASSERT_NO_FATAL_FAILURE(start_fenced_step("1", &runner));
  const int port = rig_.server().port();
  rig_.server().kill_hard();
  // Fenced: the step is stopped, its end kept, the server still away.
  EXPECT_EQ(wait_for_exit(runner), 75) << read_whole_file(rig_.path("first.err"));
  EXPECT_FALSE(step_process_runs("j1"));
  ASSERT_TRUE(rig_.start_server(port));

  CliResult again = run_cli(
      WorkRig::work_args(rig_.server().url(), rig_.path("state"), {"--once", "--step", "A=true"}));
  EXPECT_EQ(again.code, 0) << again.err;
  const json j = rig_.job("j1");
  EXPECT_EQ(j.value("state", ""), "FAILED") << j.dump();
  EXPECT_EQ(open_hold_kind("t1"), "") << "the staleness hold is released with the evidence";
}

TEST_F(WorkKeeperTest, AServerThatStopsAnsweringFencesTheStepOnTime) {
  // Given a step under a 3 s lease (a heartbeat a second) and --fence-after 2s
  pid_t runner = 0;
  ASSERT_NO_FATAL_FAILURE(start_fenced_step("3", &runner));
  // When the server is paused: it takes connections and answers nothing
  const pid_t server = rig_.server().pid();
  ::kill(server, SIGSTOP);
  const auto paused = std::chrono::steady_clock::now();
  // Then the step is stopped within the fence and the grace (a heartbeat
  // waiting for its answer, its client's 40 s read timeout, held it up)
  while (step_process_runs("j1") && std::chrono::steady_clock::now() - paused < 20s) {
    std::this_thread::sleep_for(50ms);
  }
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - paused).count();
  ::kill(server, SIGCONT);
  EXPECT_FALSE(step_process_runs("j1"));
  EXPECT_LT(took, 8.0) << read_whole_file(rig_.path("first.err"));
  EXPECT_EQ(wait_for_exit(runner), 75) << read_whole_file(rig_.path("first.err"));
}

TEST_F(WorkKeeperTest, SigusrOnePrintsTheSlotsJobStepAndChild) {
  ASSERT_TRUE(rig_.enqueue("j1", {"A"}, "t1"));
  const pid_t runner = spawn_runner({"--once", "--step", "A=sleep 2"}, "first");
  ASSERT_TRUE(wait_step_running("j1"));
  ::kill(runner, SIGUSR1);
  EXPECT_EQ(wait_for_exit(runner), 0);
  const std::string err = read_whole_file(rig_.path("first.err"));
  EXPECT_NE(err.find("slot 1: job=j1 attempt=1 step=A child_pid="), std::string::npos) << err;
  EXPECT_EQ(err.find("child_pid=0 "), std::string::npos) << err;
}

TEST_F(WorkKeeperTest, LogFormatJsonWritesEachLineAsAJsonObject) {
  ASSERT_TRUE(rig_.enqueue("j1", {"A"}, "t1"));
  CliResult r =
      run_cli(WorkRig::work_args(rig_.server().url(), rig_.path("state"),
                                 {"--once", "--log-format", "json", "--step", "A=echo hello"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const json line = json::parse(r.out.substr(0, r.out.find('\n')), nullptr, false);
  EXPECT_EQ(line.value("job", ""), "j1") << r.out;
  EXPECT_EQ(line.value("step", ""), "A") << r.out;
  EXPECT_EQ(line.value("stream", ""), "out") << r.out;
  EXPECT_EQ(line.value("line", ""), "hello") << r.out;
  // and the runner's own lines too, told apart from a step's by their stream
  ASSERT_TRUE(rig_.enqueue("j2", {"A"}, "t2"));
  CliResult refused = run_cli(
      WorkRig::work_args(rig_.server().url(), rig_.path("state"),
                         {"--once", "--log-format", "json", "--step", "A=./no/such/command"}));
  EXPECT_EQ(refused.code, 78) << refused.err;
  const json said = json::parse(refused.err.substr(0, refused.err.find('\n')), nullptr, false);
  EXPECT_EQ(said.value("stream", ""), "runner") << refused.err;
  EXPECT_NE(said.value("line", "").find("cannot execute ./no/such/command"), std::string::npos)
      << refused.err;
}

TEST_F(WorkKeeperTest, ConcurrencyRunsAttemptsAtOnceEachSlotInItsOwnFolder) {
  ASSERT_TRUE(rig_.enqueue("j1", {"A"}, "t1"));
  ASSERT_TRUE(rig_.enqueue("j2", {"A"}, "t2"));
  // Each step waits for the other to have started: both succeed only when
  // they run at the same time.
  const std::string marks = rig_.path("marks");
  std::filesystem::create_directories(marks);
  const std::string step = "A=/bin/sh -c 'touch " + marks +
                           "/$RUNLEDGER_JOB_ID; for i in $(seq 100); do [ -f " + marks +
                           "/j1 ] && [ -f " + marks + "/j2 ] && exit 0; sleep 0.1; done; exit 9'";
  CliResult r = run_cli(WorkRig::work_args(rig_.server().url(), rig_.path("state"),
                                           {"--once", "--concurrency", "2", "--step", step}));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(rig_.job("j1").value("state", ""), "SUCCEEDED");
  EXPECT_EQ(rig_.job("j2").value("state", ""), "SUCCEEDED");
  EXPECT_TRUE(std::filesystem::exists(rig_.path("state/slot-1/lock")));
  EXPECT_TRUE(std::filesystem::exists(rig_.path("state/slot-2/lock")));
}

}  // namespace
}  // namespace runledger::testing

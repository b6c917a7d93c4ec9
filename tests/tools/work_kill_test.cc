// runledger work under kill -9 (docs/worker.md "The runner dies, the host
// reboots"): cycles that each enqueue a two-step job and, at a random moment,
// kill -9 the runner (keeper bound or detached), the keeper, the step's
// process or the server (started again on the same data folder), or stop the
// runner past its lease. After each cycle: no two steps of one target ever
// overlapped (each step holds an flock on a per-target file and records a
// conflict), the attempt ended terminal or STALE with a hold, and no process
// of the job runs. At the end `runledger verify` finds the log clean.
//
// A few cycles run in ctest; RUNLEDGER_TEST_WORK_KILL_CYCLES=N runs N and
// prints the figures. A positive control shows the probe catches a runner
// that relaunches a step its detached keeper still runs.
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include <gtest/gtest.h>

#include "tests/tools/work_rig.h"

namespace runledger::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr int kKillCyclesShort = 4;

// The pids of the processes whose environment holds RUNLEDGER_JOB_ID=<job>.
std::vector<pid_t> processes_of_job(const std::string& job) {
  std::vector<pid_t> found;
  const std::string needle = "RUNLEDGER_JOB_ID=" + job;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return found;
  while (dirent* d = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(d->d_name, &end, 10);
    if (*end != '\0' || pid <= 0) continue;
    const std::string stat = read_whole_file("/proc/" + std::string(d->d_name) + "/stat");
    const size_t close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] == 'Z') continue;
    std::string env = read_whole_file("/proc/" + std::string(d->d_name) + "/environ");
    for (size_t at = 0; at < env.size();) {
      const size_t zero = env.find('\0', at);
      const std::string var = env.substr(at, zero == std::string::npos ? zero : zero - at);
      if (var == needle) found.push_back(static_cast<pid_t>(pid));
      if (zero == std::string::npos) break;
      at = zero + 1;
    }
  }
  ::closedir(proc);
  return found;
}

class WorkKillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(probe_dir());
    std::ofstream f(probe_script());
    // The exclusivity probe: the step holds an exclusive lock on its
    // target's file while it works; a lock already held is an overlap.
    f << "#!/bin/sh\n"
      << "echo \"$RUNLEDGER_JOB_ID $RUNLEDGER_STEP\" >> \"$PROBE_DIR/runs\"\n"
      << "flock -n -E 99 \"$PROBE_DIR/$RUNLEDGER_TARGET.lock\" sleep \"${PROBE_SLEEP:-0.$(( $$ % 8 "
         "+ 2 ))}\"\n"
      << "rc=$?\n"
      << "if [ $rc = 99 ]; then echo \"$RUNLEDGER_JOB_ID $RUNLEDGER_STEP\" >> "
         "\"$PROBE_DIR/overlaps\"; fi\n"
      << "exit $rc\n";
    f.close();
    std::filesystem::permissions(probe_script(), std::filesystem::perms::owner_all);
  }
  void TearDown() override { stop_runner(); }

  std::string probe_dir() const { return rig_.path("probe"); }
  std::string probe_script() const { return rig_.path("probe.sh"); }
  std::string state_dir() const { return rig_.path("state"); }
  int overlaps() const {
    const std::string text = read_whole_file(probe_dir() + "/overlaps");
    return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  }

  // `program`: runledger, or the test build that relaunches live steps.
  void start_runner(const std::string& keeper, const std::vector<std::string>& env = {},
                    const std::string& program = "runledger") {
    std::vector<std::string> argv = {bin_path(program)};
    for (const auto& a :
         WorkRig::work_args(rig_.server().url(), state_dir(),
                            {"--lease-s", "2", "--grace", "1s", "--keeper", keeper, "--step",
                             "A=" + probe_script(), "--step", "B=" + probe_script()},
                            /*wait_s=*/"1")) {
      argv.push_back(a);
    }
    std::vector<std::string> all_env = {"PROBE_DIR=" + probe_dir()};
    all_env.insert(all_env.end(), env.begin(), env.end());
    runner_ = spawn_process(argv, clean_environment(all_env), rig_.path("runner.out"),
                            rig_.path("runner.err"));
  }
  void stop_runner() {
    if (runner_ <= 0) return;
    ::kill(runner_, SIGCONT);
    ::kill(runner_, SIGTERM);
    ::kill(runner_, SIGTERM);
    wait_for_exit(runner_);
    runner_ = -1;
  }
  void kill_runner() {
    ::kill(runner_, SIGKILL);
    wait_for_exit(runner_);
    runner_ = -1;
  }
  // The live keeper and step pids the runner's journal names.
  pid_t keeper_pid() {
    const json j = json::parse(read_whole_file(state_dir() + "/attempt.json"), nullptr, false);
    return j.is_object() && j.contains("keeper") ? j["keeper"].value("pid", 0) : 0;
  }
  pid_t step_pid() {
    const json j = json::parse(read_whole_file(state_dir() + "/attempt.json"), nullptr, false);
    if (!j.is_object()) return 0;
    const std::string dir = j.value("dir", "");
    for (const char* step : {"A", "B"}) {
      const std::string base = dir + "/step-" + step;
      if (std::filesystem::exists(base + ".exit")) continue;
      const json p = json::parse(read_whole_file(base + ".pid"), nullptr, false);
      if (p.is_object()) return p.value("pid", 0);
    }
    return 0;
  }
  // The job's open hold: {id, kind}, empty when none.
  std::pair<std::string, std::string> open_hold(const std::string& job, const std::string& target) {
    const json h = rig_.get("/v1/holds?open=true&target=" + target);
    if (!h.contains("holds")) return {};
    for (const auto& hold : h["holds"]) {
      if (hold.value("job", json()).is_string() && hold["job"] == job) {
        return {hold.value("id", ""), hold.value("kind", "")};
      }
    }
    return {};
  }

  // Waits until the job's attempt is over (terminal, or STALE with a hold),
  // then checks no process of it is left. Resolves a STALE one as an
  // operator would, once nothing of it runs, so the target is free again.
  // Returns the outcome, "" if it never settled.
  std::string settle(const std::string& job, const std::string& target) {
    const auto until = std::chrono::steady_clock::now() + 40s;
    std::string state;
    std::chrono::steady_clock::time_point stale_since{};
    bool stale_seen = false;
    while (std::chrono::steady_clock::now() < until) {
      if (runner_ > 0) {
        int st = 0;
        if (::waitpid(runner_, &st, WNOHANG) == runner_) {
          runner_ = -1;  // it exited on its own: started again, as a supervisor would
          start_runner(keeper_);
        }
      }
      state = rig_.job(job).value("state", "");
      if (state == "SUCCEEDED" || state == "FAILED" || state == "CANCELLED") break;
      // A runner's report that the result is unknown ends the attempt; a
      // lease that expired (the runner stopped, the server away) is only
      // over if no runner takes it back by reattaching.
      const auto [hold, kind] = open_hold(job, target);
      if (state != "STALE" || hold.empty()) {
        stale_seen = false;
      } else if (kind == "RESULT_UNKNOWN") {
        break;
      } else if (!stale_seen) {
        stale_seen = true;
        stale_since = std::chrono::steady_clock::now();
      } else if (std::chrono::steady_clock::now() - stale_since > 8s) {
        break;
      }
      std::this_thread::sleep_for(100ms);
    }
    if (state != "SUCCEEDED" && state != "FAILED" && state != "CANCELLED" && state != "STALE") {
      return "";
    }
    if (state == "STALE" && open_hold(job, target).first.empty()) return "";
    std::vector<pid_t> left;
    for (int i = 0; i < 40; ++i) {
      left = processes_of_job(job);
      if (left.empty()) break;
      std::this_thread::sleep_for(50ms);
    }
    leftovers_ += static_cast<int>(left.size());
    for (pid_t p : left) ::kill(p, SIGKILL);
    if (state == "STALE") {
      const std::string hold = open_hold(job, target).first;
      if (open_hold(job, target).second != "RESULT_UNKNOWN") state = "STALE-blocking";
      rig_.post("/v1/holds/" + hold + "/release", {{"note", "the test saw nothing of it running"},
                                                   {"execution_stopped", true},
                                                   {"outcome", "FAILED"}});
    }
    return state;
  }

  WorkRig rig_;
  pid_t runner_ = -1;
  std::string keeper_ = "bound";
  int leftovers_ = 0;
};

TEST_F(WorkKillTest, KillNineAnywhereNeverRunsATargetTwiceNorLeavesAProcess) {
  int cycles = kKillCyclesShort;
  if (const char* n = std::getenv("RUNLEDGER_TEST_WORK_KILL_CYCLES")) cycles = std::atoi(n);
  std::mt19937 rng(std::random_device{}());
  const char* victims[] = {"runner", "keeper", "child", "server", "sigstop"};
  std::map<std::string, int> by_victim, by_outcome;
  int unsettled = 0;
  const auto began = std::chrono::steady_clock::now();
  start_runner(keeper_);
  for (int i = 0; i < cycles; ++i) {
    const std::string job = "k" + std::to_string(i);
    const std::string target = "t" + std::to_string(i % 2);
    ASSERT_TRUE(rig_.enqueue(job, {"A", "B"}, target, /*max_attempts=*/2));
    const std::string victim = victims[rng() % 5];
    const std::string keeper = rng() % 2 == 0 ? "bound" : "detached";
    if (keeper != keeper_) {
      stop_runner();
      keeper_ = keeper;
      start_runner(keeper_);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100 + rng() % 1400));
    if (victim == "runner") {
      kill_runner();
      std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 1000));
      start_runner(keeper_);
    } else if (victim == "keeper") {
      if (pid_t k = keeper_pid(); k > 0) ::kill(k, SIGKILL);
    } else if (victim == "child") {
      if (pid_t c = step_pid(); c > 0) ::kill(c, SIGKILL);
    } else if (victim == "server") {
      ASSERT_TRUE(rig_.restart_server_hard()) << rig_.server().log();
    } else {
      ::kill(runner_, SIGSTOP);
      std::this_thread::sleep_for(3500ms);  // past the 2 s lease: the attempt goes STALE
      ::kill(runner_, SIGCONT);
    }
    const std::string outcome = settle(job, target);
    if (cycles > kKillCyclesShort) {
      std::printf("cycle %d: %s, keeper %s: %s\n", i, victim.c_str(), keeper_.c_str(),
                  outcome.c_str());
      std::fflush(stdout);
    }
    ++by_victim[victim + "/" + keeper_];
    ++by_outcome[outcome.empty() ? "unsettled" : outcome];
    if (outcome.empty()) {
      ++unsettled;
      ADD_FAILURE() << "cycle " << i << " (" << victim << ", " << keeper_ << "): job " << job
                    << " never settled: " << rig_.job(job).dump() << "\n"
                    << read_whole_file(rig_.path("runner.err"));
      break;
    }
  }
  stop_runner();
  const auto took =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - began);
  std::printf("work kill cycles: %d in %lld s; overlaps %d; processes left %d; unsettled %d\n",
              cycles, static_cast<long long>(took.count()), overlaps(), leftovers_, unsettled);
  for (const auto& [v, n] : by_victim) std::printf("  victim %s: %d\n", v.c_str(), n);
  for (const auto& [o, n] : by_outcome) std::printf("  outcome %s: %d\n", o.c_str(), n);
  EXPECT_EQ(overlaps(), 0) << read_whole_file(probe_dir() + "/overlaps");
  EXPECT_EQ(leftovers_, 0);
  // A lease that expired under a runner that lives on is taken back by it.
  EXPECT_EQ(by_outcome["STALE-blocking"], 0);
  EXPECT_EQ(rig_.server().terminate(), 0);
  CliResult verify = run_cli({"verify", "--data", rig_.server().data()});
  EXPECT_EQ(verify.code, 0) << verify.out << verify.err;
}

// The positive control: a runner that, started again, relaunches the step
// its detached keeper still runs is caught by the probe. The same scenario
// without the fault runs the step once and records no overlap.
TEST_F(WorkKillTest, TheProbeCatchesARunnerThatRelaunchesALiveStep) {
  for (const bool faulty : {false, true}) {
    SCOPED_TRACE(faulty ? "relaunching runner" : "settling runner");
    const std::string job = faulty ? "faulty" : "sound";
    ASSERT_TRUE(rig_.enqueue(job, {"A"}, "t-" + job));
    keeper_ = "detached";
    start_runner(keeper_, {"PROBE_SLEEP=4"});
    for (int i = 0; i < 100 && step_pid() == 0; ++i) std::this_thread::sleep_for(50ms);
    ASSERT_GT(step_pid(), 0) << read_whole_file(rig_.path("runner.err"));
    kill_runner();
    start_runner(keeper_, {"PROBE_SLEEP=4"}, faulty ? "runledger_relaunching" : "runledger");
    const std::string outcome = settle(job, "t-" + job);
    stop_runner();
    EXPECT_FALSE(outcome.empty()) << read_whole_file(rig_.path("runner.err"));
    EXPECT_EQ(overlaps(), faulty ? 1 : 0) << read_whole_file(probe_dir() + "/runs");
    if (!faulty) {
      EXPECT_EQ(outcome, "SUCCEEDED") << rig_.job(job).dump();
      EXPECT_EQ(read_whole_file(probe_dir() + "/runs"), job + " A\n");
    }
  }
}

}  // namespace
}  // namespace runledger::testing

// runledger work (docs/worker.md) as a real subprocess against a real
// runledgerd, running real shell steps: each step's end mapped to the
// protocol and the attempt's end to the exit code; the child's environment
// and files, and no token in them; cancel at a boundary and by interrupt;
// SIGTERM hands the attempt back with yield; preflight refusals.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "tests/tools/tools_test_support.h"

namespace runledger::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

class WorkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(dir_.path() + "/data", server_flags());
    ASSERT_TRUE(server_->wait_ready()) << server_->log();
    http_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  }
  void TearDown() override {
    if (server_ && server_->running()) {
      EXPECT_EQ(server_->terminate(), 0) << server_->log();
    }
  }
  virtual std::vector<std::string> server_flags() { return {}; }
  virtual httplib::Headers auth() { return {}; }

  json post(const std::string& path, const json& body) {
    auto r = http_->Post(path, auth(), body.dump(), "application/json");
    EXPECT_TRUE(r) << path;
    return r ? json::parse(r->body, nullptr, false) : json();
  }
  json job(const std::string& id) {
    auto r = http_->Get("/v1/jobs/" + id, auth());
    return r ? json::parse(r->body, nullptr, false) : json();
  }
  void enqueue(const std::string& id, const std::vector<std::string>& plan, int max_attempts = 1) {
    json j = post("/v1/jobs", {{"id", id},
                               {"kind", "k"},
                               {"target", "t-" + id},
                               {"plan", plan},
                               {"max_attempts", max_attempts},
                               {"input", {{"day", "2026-05-06"}}}});
    ASSERT_EQ(j.value("id", ""), id) << j.dump();
  }
  // `runledger work --kind k --once ...` with its own state folder.
  std::vector<std::string> work_args(std::vector<std::string> extra) {
    std::vector<std::string> args = {"work",
                                     "--kind",
                                     "k",
                                     "--server",
                                     server_->url(),
                                     "--state-dir",
                                     dir_.path() + "/state",
                                     "--wait-s",
                                     "0",
                                     "--lease-s",
                                     "3",
                                     "--once"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }
  // Waits (20 s at most) until `n` claims wait on the server
  // (runledger_claims_waiting in /metrics).
  bool claims_waiting(long n) {
    for (int i = 0; i < 400; ++i) {
      auto r = http_->Get("/metrics", auth());
      if (r && metric_in(r->body, "runledger_claims_waiting") == n) return true;
      std::this_thread::sleep_for(50ms);
    }
    return false;
  }
  // Waits (10 s at most) until step `index` of the job runs: a cancel sent
  // then meets a running step, not the step's start.
  bool wait_for_step_running(const std::string& id, size_t index) {
    for (int i = 0; i < 200; ++i) {
      const json j = job(id);
      if (j.contains("steps") && j["steps"].size() > index &&
          j["steps"][index].value("state", "") == "RUNNING") {
        return true;
      }
      std::this_thread::sleep_for(50ms);
    }
    return false;
  }
  CliResult work(std::vector<std::string> extra, const std::vector<std::string>& env = {}) {
    return run_cli(work_args(std::move(extra)), env);
  }
  std::string path(const std::string& name) const { return dir_.path() + "/" + name; }
  // An executable shell script of `body`; its path. A --step command runs
  // as `sh -c 'exec CMD'`: one command, as a script is.
  std::string script(const std::string& name, const std::string& body) const {
    std::string file = path(name + ".sh");
    {
      std::ofstream f(file);
      f << "#!/bin/sh\n" << body << "\n";
    }
    std::filesystem::permissions(file, std::filesystem::perms::owner_all);
    return file;
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<httplib::Client> http_;
};

TEST_F(WorkTest, EachStepRunsItsCommandAndTheAttemptSucceeds) {
  enqueue("j1", {"FETCH", "LOAD"});
  const std::string fetch =
      script("fetch", "echo fetched; printf %s \"$RUNLEDGER_STEP_INDEX\" > " + path("fetch"));
  CliResult r = work({"--summary", "json", "--step", "FETCH=" + fetch, "--step",
                      "LOAD=cp \"$RUNLEDGER_INPUT_FILE\" " + path("load")});

  EXPECT_EQ(r.code, 0) << r.err << r.out;
  const json j = job("j1");
  EXPECT_EQ(j.value("state", ""), "SUCCEEDED") << j.dump();
  EXPECT_EQ(read_whole_file(path("fetch")), "1");
  EXPECT_EQ(json::parse(read_whole_file(path("load")), nullptr, false).value("day", ""),
            "2026-05-06");
  EXPECT_EQ(j["steps"][0]["output"].value("exit_code", -1), 0) << j.dump();
  EXPECT_NE(r.out.find("job=j1 attempt=1 step=FETCH fetched"), std::string::npos) << r.out;
  json summary = json::parse(lines_of(r.out).back(), nullptr, false);
  EXPECT_EQ(summary.value("state", ""), "SUCCEEDED") << r.out;
  EXPECT_EQ(summary["steps"].size(), 2u);
}

TEST_F(WorkTest, TheSummaryTimesEachStepFromItsExecToItsReport) {
  enqueue("j1", {"A", "B"});
  CliResult r = work({"--summary", "json", "--", "true"});

  ASSERT_EQ(r.code, 0) << r.err;
  const json summary = json::parse(lines_of(r.out).back(), nullptr, false);
  ASSERT_EQ(summary["steps"].size(), 2u) << r.out;
  // The claim's reply, then for each step in turn: its exec (the keeper's
  // vfork returned), its end as the keeper saw it, its `done` answered.
  int64_t before = summary.value("claimed_unix_ns", int64_t{0});
  EXPECT_GT(before, 0) << r.out;
  for (const json& step : summary["steps"]) {
    for (const char* moment : {"exec_unix_ns", "exited_unix_ns", "reported_unix_ns"}) {
      const int64_t at = step.value(moment, int64_t{0});
      EXPECT_GE(at, before) << moment << " " << r.out;
      before = at;
    }
  }
}

TEST_F(WorkTest, TheSameCommandRunsForEveryStepWithTheStepNameInItsArguments) {
  enqueue("j1", {"A", "B"});
  CliResult r = work({"--", "sh", "-c", "printf %s \"$1\" >> " + path("steps"), "sh", "{step}"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read_whole_file(path("steps")), "AB");
}

TEST_F(WorkTest, AFailingStepFailsTheAttemptWithItsExitAndOutputTail) {
  enqueue("j1", {"A", "B"});
  CliResult r = work(
      {"--step", "A=" + script("a", "echo boom >&2; exit 3"), "--step", "B=touch " + path("b")});

  EXPECT_EQ(r.code, 1) << r.err;
  const json j = job("j1");
  EXPECT_EQ(j.value("state", ""), "FAILED") << j.dump();
  const std::string error = j["steps"][0].value("error", "");
  EXPECT_EQ(error.rfind("exit 3 after ", 0), 0u) << error;
  EXPECT_NE(error.find("boom"), std::string::npos) << error;
  EXPECT_FALSE(std::filesystem::exists(path("b")));
}

TEST_F(WorkTest, ARetryableExitQueuesARetry) {
  enqueue("j1", {"A"}, /*max_attempts=*/2);
  CliResult r = work({"--step", "A=" + script("a", "exit 75")});

  EXPECT_EQ(r.code, 1) << r.err;
  const json j = job("j1");
  EXPECT_EQ(j.value("attempt", 0), 2) << j.dump();
  EXPECT_EQ(j.value("state", ""), "QUEUED") << j.dump();
}

TEST_F(WorkTest, AResultFileThatSaysTheOutcomeIsUnknownLeavesTheAttemptStale) {
  enqueue("j1", {"A"});
  CliResult r = work(
      {"--step",
       R"(A=echo '{"outcome":"result_unknown","detail":"the warehouse timed out"}' > "$RUNLEDGER_RESULT_FILE")"});

  EXPECT_EQ(r.code, 4) << r.err;
  const json j = job("j1");
  EXPECT_EQ(j.value("state", ""), "STALE") << j.dump();
}

TEST_F(WorkTest, AStepsResultFileOutputIsItsDoneOutput) {
  enqueue("j1", {"A"});
  CliResult r = work({"--step", R"(A=echo '{"output":{"rows":42}}' > "$RUNLEDGER_RESULT_FILE")"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(job("j1")["steps"][0]["output"]["result"].value("rows", 0), 42);
}

TEST_F(WorkTest, NothingReadyIsExit0) {
  CliResult r = work({"--step", "A=true"});
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST_F(WorkTest, ACancelIsSeenAtTheStepBoundary) {
  enqueue("j1", {"A", "B"});
  const std::string cancel_seen = path("cancel-seen");
  TempDir out;
  const pid_t runner = spawn_process(
      {bin_path("runledger"), "work", "--kind", "k", "--server", server_->url(), "--state-dir",
       dir_.path() + "/state", "--wait-s", "0", "--lease-s", "3", "--once", "--step",
       "A=" + script("a", "for i in $(seq 100); do [ -f \"$RUNLEDGER_CANCEL_FILE\" ] && touch " +
                              cancel_seen + " && exit 0; sleep 0.1; done; exit 9"),
       "--step", "B=touch " + path("b")},
      clean_environment(), out.path() + "/out", out.path() + "/err");
  ASSERT_TRUE(wait_for_step_running("j1", 0));
  post("/v1/jobs/j1/cancel", {{"reason", "not today"}});

  EXPECT_EQ(wait_for_exit(runner), 3) << read_whole_file(out.path() + "/err");
  EXPECT_TRUE(std::filesystem::exists(cancel_seen));
  EXPECT_FALSE(std::filesystem::exists(path("b")));
  EXPECT_EQ(job("j1").value("state", ""), "CANCELLED");
}

TEST_F(WorkTest, ACancelInterruptsTheStepWhenAsked) {
  enqueue("j1", {"A"});
  TempDir out;
  const auto began = std::chrono::steady_clock::now();
  const pid_t runner =
      spawn_process({bin_path("runledger"), "work", "--kind", "k", "--server", server_->url(),
                     "--state-dir", dir_.path() + "/state", "--wait-s", "0", "--lease-s", "3",
                     "--once", "--cancel", "interrupt", "--grace", "1s", "--step", "A=sleep 60"},
                    clean_environment(), out.path() + "/out", out.path() + "/err");
  ASSERT_TRUE(wait_for_step_running("j1", 0));
  post("/v1/jobs/j1/cancel", json::object());

  EXPECT_EQ(wait_for_exit(runner), 3) << read_whole_file(out.path() + "/err");
  // Within lease/3 + 1 s and the grace, far from the step's 60 s.
  EXPECT_LT(std::chrono::steady_clock::now() - began, 20s);
  EXPECT_EQ(job("j1").value("state", ""), "CANCELLED");
}

TEST_F(WorkTest, SigtermLetsTheStepFinishThenYieldsKeepingTheDoneSteps) {
  enqueue("j1", {"A", "B", "C"});
  TempDir out;
  const pid_t runner = spawn_process(
      {bin_path("runledger"), "work", "--kind", "k", "--server", server_->url(), "--state-dir",
       dir_.path() + "/state", "--wait-s", "0", "--lease-s", "3", "--once", "--step", "A=true",
       "--step", "B=" + script("b", "sleep 1; touch " + path("b")), "--step",
       "C=touch " + path("c")},
      clean_environment(), out.path() + "/out", out.path() + "/err");
  for (int i = 0; i < 100 && !std::filesystem::exists(path("state")); ++i) {
    std::this_thread::sleep_for(50ms);
  }
  for (int i = 0; i < 100; ++i) {
    const json j = job("j1");
    if (j.value("state", "") == "RUNNING" && j["steps"][1].value("state", "") == "RUNNING") break;
    std::this_thread::sleep_for(20ms);
  }
  ::kill(runner, SIGTERM);

  EXPECT_EQ(wait_for_exit(runner), 75) << read_whole_file(out.path() + "/err");
  EXPECT_TRUE(std::filesystem::exists(path("b")));
  EXPECT_FALSE(std::filesystem::exists(path("c")));
  const json j = job("j1");
  EXPECT_EQ(j.value("attempt", 0), 2) << j.dump();
  EXPECT_EQ(j.value("state", ""), "QUEUED") << j.dump();
  EXPECT_EQ(j["attempts"][0].value("state", ""), "YIELDED") << j.dump();
  EXPECT_EQ(j["steps"][1].value("state", ""), "REUSED") << j.dump();
}

TEST_F(WorkTest, AStepWithoutACommandFailsNotRetryable) {
  enqueue("j1", {"A", "B"}, /*max_attempts=*/2);
  CliResult r = work({"--step", "A=true"});

  EXPECT_EQ(r.code, 1) << r.err;
  const json j = job("j1");
  EXPECT_EQ(j.value("state", ""), "FAILED") << j.dump();
  EXPECT_EQ(j["steps"][1].value("error", ""), "no command for step") << j.dump();
}

TEST_F(WorkTest, EachStepReadsTheOutputsOfTheStepsDoneBeforeIt) {
  // Given three steps, each writing an output and keeping what it was given
  enqueue("j1", {"A", "B", "C"});
  auto step = [&](const std::string& name, int rows) {
    return name + "=" +
           script(name, "cp \"$RUNLEDGER_PRIOR_OUTPUTS_FILE\" " + path("prior-" + name) +
                            "; echo '{\"output\":{\"rows\":" + std::to_string(rows) +
                            "}}' > \"$RUNLEDGER_RESULT_FILE\"");
  };
  CliResult r = work({"--step", step("A", 1), "--step", step("B", 2), "--step", step("C", 3)});
  ASSERT_EQ(r.code, 0) << r.err;
  // Then each step's file held the outputs of those done before it in the
  // same attempt, as the server recorded them
  const json j = job("j1");
  ASSERT_EQ(j.value("state", ""), "SUCCEEDED") << j.dump();
  EXPECT_EQ(json::parse(read_whole_file(path("prior-A")), nullptr, false), json::object());
  EXPECT_EQ(json::parse(read_whole_file(path("prior-B")), nullptr, false),
            json({{"A", j["steps"][0]["output"]}}));
  EXPECT_EQ(json::parse(read_whole_file(path("prior-C")), nullptr, false),
            json({{"A", j["steps"][0]["output"]}, {"B", j["steps"][1]["output"]}}));
  EXPECT_EQ(j["steps"][1]["output"]["result"].value("rows", 0), 2) << j.dump();
}

TEST_F(WorkTest, PreflightRefusesWhatCannotWork) {
  enqueue("j1", {"A"});
  EXPECT_EQ(run_cli({"work", "--server", server_->url(), "--", "true"}).code, 64);  // no --kind
  EXPECT_EQ(work({"--", "/no/such/command"}).code, 78);
  // A --step command whose program cannot be run, quoted too
  CliResult step = work({"--step", "A=./no/such/command --fast"});
  EXPECT_EQ(step.code, 78) << step.err;
  EXPECT_NE(step.err.find("cannot execute ./no/such/command (the command of step A)"),
            std::string::npos)
      << step.err;
  EXPECT_EQ(work({"--step", "A='no such command' --fast"}).code, 78);
  // and nothing was claimed
  EXPECT_EQ(job("j1").value("state", ""), "QUEUED") << job("j1").dump();
  // while one the shell alone resolves is left to it
  EXPECT_EQ(work({"--step", "A=\"$(command -v true)\" --fast"}).code, 0);
  EXPECT_EQ(job("j1").value("state", ""), "SUCCEEDED") << job("j1").dump();
  const std::string nobody = "http://127.0.0.1:" + std::to_string(free_port());
  CliResult down = run_cli({"work", "--kind", "k", "--server", nobody, "--once", "--state-dir",
                            path("state-down"), "--", "true"});
  EXPECT_EQ(down.code, 69) << down.err;
}

// runledger without runledger-keeper beside it (nor in ../lib/runledger/):
// its preflight says so, and no job is claimed.
TEST_F(WorkTest, PreflightRefusesWithoutTheKeeperProgram) {
  enqueue("j1", {"A"});
  TempDir alone;
  const std::string lonely = alone.path() + "/runledger";
  // A hard link: the program runs from this folder (/proc/self/exe names
  // the link), which holds no keeper program.
  if (::link(bin_path("runledger").c_str(), lonely.c_str()) != 0) {
    std::filesystem::copy_file(bin_path("runledger"), lonely);
  }
  std::vector<std::string> argv = {lonely};
  for (const std::string& a : work_args({"--", "true"})) argv.push_back(a);
  TempDir out;
  const pid_t runner =
      spawn_process(argv, clean_environment(), out.path() + "/out", out.path() + "/err");

  EXPECT_EQ(wait_for_exit(runner), 78);
  EXPECT_NE(read_whole_file(out.path() + "/err").find("runledger-keeper"), std::string::npos)
      << read_whole_file(out.path() + "/err");
  EXPECT_EQ(job("j1").value("state", ""), "QUEUED");
}

TEST_F(WorkTest, TwoRunnersNeverShareAStateFolder) {
  TempDir out;
  const pid_t first =
      spawn_process({bin_path("runledger"), "work", "--kind", "k", "--server", server_->url(),
                     "--state-dir", dir_.path() + "/state", "--wait-s", "2", "--", "true"},
                    clean_environment(), out.path() + "/out", out.path() + "/err");
  for (int i = 0; i < 100 && !std::filesystem::exists(path("state/lock")); ++i) {
    std::this_thread::sleep_for(50ms);
  }
  std::this_thread::sleep_for(200ms);

  CliResult second = work({"--", "true"});
  ::kill(first, SIGTERM);

  EXPECT_EQ(second.code, 78) << second.err;
  EXPECT_NE(second.err.find("in use"), std::string::npos) << second.err;
  EXPECT_EQ(wait_for_exit(first), 0) << read_whole_file(out.path() + "/err");
}

// The state folder keeps the folders of the newest attempts that are over,
// not every attempt ever run.
TEST_F(WorkTest, OnlyTheNewestAttemptFoldersAreKept) {
  const auto attempt_folders = [&] {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(path("state"))) {
      if (e.is_directory()) names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  };
  for (const std::string id : {"j1", "j2", "j3", "j4"}) {
    enqueue(id, {"A"});
    CliResult r = work({"--keep-attempts", "2", "--step", "A=echo " + id});
    ASSERT_EQ(r.code, 0) << r.err;
  }
  EXPECT_EQ(attempt_folders(), (std::vector<std::string>{"j3-a1", "j4-a1"}));
  EXPECT_EQ(read_whole_file(path("state/j4-a1/step-A.stdout")), "j4\n");

  enqueue("j5", {"A"});
  ASSERT_EQ(work({"--keep-attempts", "0", "--step", "A=true"}).code, 0);
  EXPECT_TRUE(attempt_folders().empty());
}

// The processes whose command line names `state_dir`: a runner and the
// keepers it forked.
int processes_of(const std::string& state_dir) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = read_whole_file(e.path().string() + "/cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    const std::string stat = read_whole_file(e.path().string() + "/stat");
    const size_t close = stat.rfind(") ");
    const bool zombie = close != std::string::npos && stat.compare(close + 2, 1, "Z") == 0;
    if (!zombie && cmdline.find(" " + state_dir + " ") != std::string::npos) ++n;
  }
  return n;
}

// The keeper forked while the claim waits goes with its runner, killed or
// stopped, bound or detached: nothing of the runner is left behind.
TEST_F(WorkTest, TheKeeperForkedWhileTheClaimWaitsGoesWithItsRunner) {
  for (const std::string keeper : {"bound", "detached"}) {
    for (const int signal : {SIGKILL, SIGTERM}) {
      SCOPED_TRACE(keeper + " " + std::to_string(signal));
      const std::string state = path("state-" + keeper + std::to_string(signal));
      TempDir out;
      const pid_t runner =
          spawn_process({bin_path("runledger"), "work", "--kind", "k", "--server", server_->url(),
                         "--state-dir", state, "--wait-s", "30", "--keeper", keeper, "--", "true"},
                        clean_environment(), out.path() + "/out", out.path() + "/err");
      for (int i = 0; i < 100 && processes_of(state) < 2; ++i) std::this_thread::sleep_for(50ms);
      EXPECT_EQ(processes_of(state), 2);  // the runner and its spare keeper
      ::kill(runner, signal);
      wait_for_exit(runner);
      for (int i = 0; i < 100 && processes_of(state) > 0; ++i) std::this_thread::sleep_for(50ms);
      EXPECT_EQ(processes_of(state), 0);
    }
  }
}

// A runner told to stop while its claim waits for work stops at once, not
// after --wait-s; the server gives the next job to a claim that still waits,
// not to the one whose runner left.
TEST_F(WorkTest, SigtermWhileTheClaimWaitsStopsAtOnceAndTheNextJobGoesToAnotherRunner) {
  TempDir out;
  const auto spawn_runner = [&](const std::string& name, const std::string& wait_s,
                                std::vector<std::string> extra) {
    std::vector<std::string> argv = {
        bin_path("runledger"), "work",     "--kind",   "k",    "--server", server_->url(),
        "--state-dir",         path(name), "--wait-s", wait_s, "--worker", name};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return spawn_process(argv, clean_environment(), out.path() + "/" + name + ".out",
                         out.path() + "/" + name + ".err");
  };
  const pid_t leaving = spawn_runner("leaving", "30", {"--", "true"});
  for (int i = 0; i < 100 && !std::filesystem::exists(path("leaving/lock")); ++i) {
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(claims_waiting(1));
  const auto stopped_at = std::chrono::steady_clock::now();
  ::kill(leaving, SIGTERM);
  EXPECT_EQ(wait_for_exit(leaving), 0) << read_whole_file(out.path() + "/leaving.err");
  EXPECT_LT(std::chrono::steady_clock::now() - stopped_at, 5s);

  // The claim of the runner that left is older than this one's.
  const pid_t staying = spawn_runner("staying", "20", {"--once", "--", "true"});
  for (int i = 0; i < 100 && !std::filesystem::exists(path("staying/lock")); ++i) {
    std::this_thread::sleep_for(50ms);
  }
  // The leaving runner's claim still waits on the server, older than this
  // one: the server looks whether a claim's client is there only when it
  // has a job for it.
  ASSERT_TRUE(claims_waiting(2));
  enqueue("j1", {"A"});

  EXPECT_EQ(wait_for_exit(staying), 0) << read_whole_file(out.path() + "/staying.err");
  const json j = job("j1");
  EXPECT_EQ(j.value("state", ""), "SUCCEEDED") << j.dump();
  auto events = http_->Get("/v1/jobs/j1/events", auth());
  ASSERT_TRUE(events);
  EXPECT_NE(events->body.find(R"("worker":"staying")"), std::string::npos) << events->body;
  EXPECT_EQ(events->body.find(R"("worker":"leaving")"), std::string::npos) << events->body;
}

class WorkAuthTest : public WorkTest {
 protected:
  std::vector<std::string> server_flags() override {
    std::ofstream f(tokens_.path() + "/tokens");
    f << "runner worker worker-token-0123456789abcdef\n"
      << "oncall operator operator-token-0123456789abc\n";
    return {"--auth-tokens", tokens_.path() + "/tokens"};
  }
  httplib::Headers auth() override {
    return {{"Authorization", "Bearer operator-token-0123456789abc"}};
  }
  TempDir tokens_;
};

TEST_F(WorkAuthTest, TheChildGetsItsEnvironmentAndFilesButNeverAToken) {
  enqueue("j1", {"A"});
  {
    std::ofstream f(tokens_.path() + "/runner-token");
    f << "worker-token-0123456789abcdef\n";
  }
  const std::string a =
      script("a", "tr '\\0' '\\n' < /proc/self/environ > " + path("environ") +
                      "; cat \"$RUNLEDGER_PRIOR_OUTPUTS_FILE\" > " + path("prior"));
  CliResult r =
      work({"--step", "A=" + a}, {"RUNLEDGER_TOKEN_FILE=" + tokens_.path() + "/runner-token"});

  ASSERT_EQ(r.code, 0) << r.err;
  const std::string environ = read_whole_file(path("environ"));
  for (const char* name :
       {"RUNLEDGER_JOB_ID=j1", "RUNLEDGER_KIND=k", "RUNLEDGER_TARGET=t-j1", "RUNLEDGER_ATTEMPT=1",
        "RUNLEDGER_STEP=A", "RUNLEDGER_STEP_INDEX=1", "RUNLEDGER_PLAN=A",
        "RUNLEDGER_CLIENT_TOKEN=j1-a1", "RUNLEDGER_STEP_TOKEN=j1-a1-A", "RUNLEDGER_INPUT_FILE=",
        "RUNLEDGER_RESULT_FILE=", "RUNLEDGER_CANCEL_FILE=", "RUNLEDGER_SERVER="}) {
    EXPECT_NE(environ.find(name), std::string::npos) << name << "\n" << environ;
  }
  EXPECT_EQ(environ.find("worker-token"), std::string::npos) << environ;
  EXPECT_EQ(environ.find("RUNLEDGER_TOKEN_FILE"), std::string::npos) << environ;
  EXPECT_EQ(read_whole_file(path("prior")), "{}");
  // Nothing in the state folder holds the bearer token either.
  for (const auto& e : std::filesystem::recursive_directory_iterator(path("state"))) {
    if (e.is_regular_file()) {
      EXPECT_EQ(read_whole_file(e.path().string()).find("worker-token"), std::string::npos);
    }
  }
  EXPECT_EQ(job("j1").value("state", ""), "SUCCEEDED");
}

}  // namespace
}  // namespace runledger::testing

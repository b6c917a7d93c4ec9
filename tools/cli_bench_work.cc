// runledger bench work (docs/worker.md "Speed and limits"): N `runledger
// work` runners, real subprocesses, against one runledgerd (started here on
// a temporary folder, or --server URL):
//   1. steps:     N runners x M jobs of one `true` step: steps/s, and a
//                 step's overhead, claim reply to exec and exit to `done`
//                 durable (from the runners' --summary json, whose exec and
//                 exit moments the keeper reads);
//   2. heartbeat: H runners each running a long step with a 3 s lease (a
//                 heartbeat a second): the server's CPU per heartbeat;
//   3. idle:      I runners long-polling claims of a kind nobody enqueues:
//                 the server's CPU per idle runner, above the server's own
//                 with no runner at all (measured first, as long).
// Server CPU is read from /proc/<pid>/stat, so phases 2 and 3 need the
// server started here. Checks its own counts; its speed is reported, never
// judged.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "bench/child_process.h"
#include "bench/result.h"
#include "client/client.h"
#include "tools/cli_commands.h"

namespace runledger::cli {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

struct WorkBenchFlags {
  int runners = 4;
  int jobs_per_runner = 50;
  int heartbeat_runners = 20;
  int idle_runners = 50;
  int window_s = 5;
  std::string server;
  bool json_out = false;
};

class WorkBench {
 public:
  explicit WorkBench(const WorkBenchFlags& f) : f_(f) {}
  bench::BenchResult run();

 private:
  bool start_server();
  std::vector<pid_t> start_runners(int n, const std::string& kind,
                                   const std::vector<std::string>& extra);
  // SIGTERM (or `signal`) to each, and waits for them.
  void stop_runners(std::vector<pid_t>& pids, int signal = SIGTERM);
  // How many jobs of `kind` are in `state`.
  uint64_t count(const std::string& kind, const std::string& state);
  bool wait_count(const std::string& kind, const std::string& state, uint64_t n,
                  std::chrono::seconds wait);
  void phase_steps();
  void phase_heartbeats();
  void phase_idle();

  const WorkBenchFlags& f_;
  bench::BenchResult r_;
  std::string tmp_;
  std::string url_;
  pid_t server_ = -1;
  std::unique_ptr<client::Client> c_;
  int runner_seq_ = 0;
  std::string run_id_ = client::new_idempotency_key().substr(0, 8);
};

bool WorkBench::start_server() {
  if (!f_.server.empty()) {
    url_ = f_.server;
  } else {
    const int port = bench::free_loopback_port();
    url_ = "http://127.0.0.1:" + std::to_string(port);
    server_ = bench::spawn({bench::self_dir() + "/runledgerd", "--listen",
                            "127.0.0.1:" + std::to_string(port), "--data", tmp_ + "/data"},
                           tmp_ + "/server.out", tmp_ + "/server.err");
  }
  client::ClientOptions o;
  o.server = url_;
  if (!client::Client::open(o, &c_).ok()) return false;
  for (int i = 0; i < 600; ++i) {
    if (c_->get("/v1/health").status != 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

std::vector<pid_t> WorkBench::start_runners(int n, const std::string& kind,
                                            const std::vector<std::string>& extra) {
  std::vector<pid_t> pids;
  for (int i = 0; i < n; ++i) {
    const std::string name = tmp_ + "/r" + std::to_string(++runner_seq_);
    std::vector<std::string> argv = {bench::self_dir() + "/runledger",
                                     "work",
                                     "--kind",
                                     kind,
                                     "--server",
                                     url_,
                                     "--state-dir",
                                     name,
                                     "--summary",
                                     "json"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    pids.push_back(bench::spawn(argv, name + ".out", name + ".err"));
  }
  return pids;
}

void WorkBench::stop_runners(std::vector<pid_t>& pids, int signal) {
  for (pid_t p : pids) ::kill(p, signal);
  for (pid_t p : pids) {
    int st = 0;
    ::waitpid(p, &st, 0);
  }
  pids.clear();
}

uint64_t WorkBench::count(const std::string& kind, const std::string& state) {
  uint64_t n = 0;
  std::string after;
  for (int page = 0; page < 1000; ++page) {
    client::Response r = c_->get("/v1/jobs?kind=" + kind + "&state=" + state + "&limit=1000" +
                                 (after.empty() ? "" : "&after=" + after));
    if (r.status != 200) return n;
    n += r.json["jobs"].size();
    if (!r.json["next"].is_string()) return n;
    after = r.json["next"].get<std::string>();
  }
  return n;
}

bool WorkBench::wait_count(const std::string& kind, const std::string& state, uint64_t n,
                           std::chrono::seconds wait) {
  const auto until = Clock::now() + wait;
  while (Clock::now() < until) {
    if (count(kind, state) >= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

void WorkBench::phase_steps() {
  const std::string kind = "bench-steps-" + run_id_;
  const uint64_t total = static_cast<uint64_t>(f_.runners) * f_.jobs_per_runner;
  for (uint64_t i = 0; i < total; ++i) {
    const std::string id = kind + "-" + std::to_string(i);
    c_->send("POST", "/v1/jobs",
             {{"id", id}, {"kind", kind}, {"target", id}, {"plan", json::array({"S"})}});
  }
  const int first = runner_seq_ + 1;
  const auto began = Clock::now();
  std::vector<pid_t> pids = start_runners(f_.runners, kind, {"--wait-s", "1", "--", "true"});
  const bool all = wait_count(kind, "SUCCEEDED", total, std::chrono::seconds(600));
  r_.seconds = std::chrono::duration<double>(Clock::now() - began).count();
  stop_runners(pids);
  r_.count = count(kind, "SUCCEEDED");
  r_.expect(all && r_.count == total, "every job of the steps phase succeeded");
  bench::LatencyRecorder to_exec, to_done;
  uint64_t summaries = 0;
  uint64_t in_order = 0;  // claim <= exec <= exit <= done, as they must be
  for (int i = first; i < first + f_.runners; ++i) {
    std::ifstream in(tmp_ + "/r" + std::to_string(i) + ".out");
    for (std::string line; std::getline(in, line);) {
      const json s = json::parse(line, nullptr, false);
      if (!s.is_object() || s.value("state", "") != "SUCCEEDED") continue;
      ++summaries;
      // The keeper's clock readings: its vfork returns once the step has
      // exec'd; it reads the clock again when it sees the step end.
      const json& step = s["steps"][0];
      const int64_t claimed = s.value("claimed_unix_ns", int64_t{0});
      const int64_t exec = step.value("exec_unix_ns", int64_t{0});
      const int64_t exited = step.value("exited_unix_ns", int64_t{0});
      const int64_t reported = step.value("reported_unix_ns", int64_t{0});
      if (0 < claimed && claimed <= exec && exec <= exited && exited <= reported) ++in_order;
      to_exec.add(static_cast<double>(exec - claimed) / 1e6);
      to_done.add(static_cast<double>(reported - exited) / 1e6);
    }
  }
  r_.expect(summaries == total, "a --summary line for every job");
  r_.expect(in_order == summaries, "each step's claim, exec, exit and done in that order");
  r_.checks["summaries"] = summaries;
  const bench::LatencySummary e = to_exec.summary();
  const bench::LatencySummary d = to_done.summary();
  r_.figures["claim_to_exec_p50_ms"] = e.p50_ms;
  r_.figures["claim_to_exec_p99_ms"] = e.p99_ms;
  r_.figures["exit_to_done_p50_ms"] = d.p50_ms;
  r_.figures["exit_to_done_p99_ms"] = d.p99_ms;
  r_.latency_of = "step overhead, claim to exec";
  r_.latency = e;
}

void WorkBench::phase_heartbeats() {
  if (f_.heartbeat_runners == 0 || server_ <= 0) return;
  const std::string kind = "bench-hb-" + run_id_;
  for (int i = 0; i < f_.heartbeat_runners; ++i) {
    const std::string id = kind + "-" + std::to_string(i);
    c_->send("POST", "/v1/jobs",
             {{"id", id}, {"kind", kind}, {"target", id}, {"plan", json::array({"S"})}});
  }
  std::vector<pid_t> pids =
      start_runners(f_.heartbeat_runners, kind,
                    {"--wait-s", "1", "--lease-s", "3", "--cancel", "interrupt", "--grace", "1s",
                     "--", "sleep", std::to_string(f_.window_s + 60)});
  const bool running = wait_count(kind, "RUNNING", f_.heartbeat_runners, std::chrono::seconds(120));
  r_.expect(running, "every heartbeat runner runs its step");
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const double cpu0 = bench::cpu_seconds(server_);
  const auto t0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(f_.window_s));
  const double cpu = bench::cpu_seconds(server_) - cpu0;
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  // A heartbeat a second per runner (lease 3 s, one each third of it).
  const double heartbeats = f_.heartbeat_runners * secs;
  r_.figures["heartbeat_runners"] = f_.heartbeat_runners;
  r_.figures["server_cpu_per_heartbeat_us"] = cpu / heartbeats * 1e6;
  r_.figures["server_core_pct_heartbeating"] = cpu / secs * 100;
  for (int i = 0; i < f_.heartbeat_runners; ++i) {
    c_->send("POST", "/v1/jobs/" + kind + "-" + std::to_string(i) + "/cancel", json::object());
  }
  const bool cancelled =
      wait_count(kind, "CANCELLED", f_.heartbeat_runners, std::chrono::seconds(60));
  r_.expect(cancelled, "every heartbeat runner's job was cancelled");
  stop_runners(pids);
}

void WorkBench::phase_idle() {
  if (f_.idle_runners == 0 || server_ <= 0) return;
  // The server alone first (its timers, its snapshot thread): what the
  // runners add is what is above it.
  const double base0 = bench::cpu_seconds(server_);
  const auto b0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(f_.window_s));
  const double base_pct = (bench::cpu_seconds(server_) - base0) /
                          std::chrono::duration<double>(Clock::now() - b0).count() * 100;
  std::vector<pid_t> pids =
      start_runners(f_.idle_runners, "bench-idle-" + run_id_, {"--wait-s", "30", "--", "true"});
  std::this_thread::sleep_for(std::chrono::seconds(2));  // every runner waits in its claim
  const double cpu0 = bench::cpu_seconds(server_);
  const auto t0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(f_.window_s));
  const double cpu = bench::cpu_seconds(server_) - cpu0;
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  int alive = 0;
  for (pid_t p : pids) alive += ::kill(p, 0) == 0 ? 1 : 0;
  r_.expect(alive == f_.idle_runners, "every idle runner still runs");
  r_.figures["idle_runners"] = f_.idle_runners;
  r_.figures["server_core_pct_no_runner"] = base_pct;
  r_.figures["server_core_pct_idle_total"] = cpu / secs * 100;
  r_.figures["server_core_pct_per_idle_runner"] =
      std::max(0.0, cpu / secs * 100 - base_pct) / f_.idle_runners;
  // They hold nothing, and a SIGTERM would wait out their claim's long poll.
  stop_runners(pids, SIGKILL);
}

bench::BenchResult WorkBench::run() {
  r_.workload = "work";
  r_.unit = "steps";
  r_.parameters["runners"] = f_.runners;
  r_.parameters["jobs_per_runner"] = f_.jobs_per_runner;
  r_.parameters["heartbeat_runners"] = f_.heartbeat_runners;
  r_.parameters["idle_runners"] = f_.idle_runners;
  r_.parameters["window_s"] = f_.window_s;
  char pattern[] = "/tmp/runledger-bench-work-XXXXXX";
  if (::mkdtemp(pattern) == nullptr) {
    r_.error = "cannot make a temporary folder";
    return r_;
  }
  tmp_ = pattern;
  if (!start_server()) {
    r_.error = "the server at " + url_ + " does not answer";
    r_.server_unreachable = true;
  } else {
    phase_steps();
    phase_heartbeats();
    phase_idle();
  }
  if (server_ > 0) {
    ::kill(server_, SIGTERM);
    int st = 0;
    ::waitpid(server_, &st, 0);
  }
  std::error_code ec;
  fs::remove_all(tmp_, ec);
  bench::finish(r_);
  return r_;
}

}  // namespace

Subcommand add_bench_work(CLI::App& bench) {
  auto f = std::make_shared<WorkBenchFlags>();
  CLI::App* app = bench.add_subcommand(
      "work",
      "N `runledger work` runners x M jobs of one trivial step against one runledgerd: steps/s, "
      "a step's overhead (claim to exec, exit to done), server CPU per heartbeat and per idle "
      "long-polling runner");
  app->add_option("--runners", f->runners, "runners of the steps phase")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app->add_option("--jobs", f->jobs_per_runner, "jobs per runner")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app->add_option("--heartbeat-runners", f->heartbeat_runners,
                  "runners heartbeating every second (0: skip)")
      ->check(CLI::Range(0, 2000))
      ->capture_default_str();
  app->add_option("--idle-runners", f->idle_runners, "runners long-polling (0: skip)")
      ->check(CLI::Range(0, 5000))
      ->capture_default_str();
  app->add_option("--window-s", f->window_s, "seconds each CPU measurement lasts")
      ->check(CLI::Range(1, 600))
      ->capture_default_str();
  app->add_option("--server", f->server,
                  "drive this runledgerd (steps phase only: its CPU cannot be read)");
  app->add_flag("--json", f->json_out, "print the result as one JSON object");
  return {app, [f] {
            WorkBench b(*f);
            bench::BenchResult r = b.run();
            std::string text = f->json_out ? bench::to_json(r).dump() + "\n" : bench::to_table(r);
            std::fputs(text.c_str(), stdout);
            if (!r.error.empty()) return r.server_unreachable ? kExitUnavailable : kExitSoftware;
            return r.ok() ? kExitOk : kExitFindings;
          }};
}

}  // namespace runledger::cli

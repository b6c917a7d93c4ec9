#include "worker/runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "events/hash.h"
#include "events/private_folder.h"
#include "worker/step_outcome.h"
#include "worker/step_process.h"

extern char** environ;

namespace runledger::worker {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

// SIGTERM and SIGINT seen (the first drains, the second stops at once).
std::atomic<int> g_stop_signals{0};
// SIGTSTP: stop claiming, finish what runs.
std::atomic<bool> g_no_more_claims{false};

void on_stop_signal(int) { g_stop_signals.fetch_add(1); }
void on_tstp(int) { g_no_more_claims = true; }

// Three commands in a row that could not be executed stop the runner: a
// broken host must not burn every job's attempts.
constexpr int kUnexecutableInARowMax = 3;
// How often the runner looks at its child, the clock and its signals.
constexpr std::chrono::milliseconds kTick{100};

std::string hostname() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string boot_id() {
  std::string id = read_file("/proc/sys/kernel/random/boot_id");
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  return id;
}

// The process's start time in clock ticks since boot (field 22 of stat):
// with the boot id, a reused pid is never taken for the same process.
std::string start_ticks(pid_t pid) {
  const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return "0";
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i) {
  }
  return field;
}

bool executable_in_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (::access((dir + "/" + name).c_str(), X_OK) == 0) return true;
  }
  return false;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// How one attempt ended for the runner.
enum class AttemptEnd : uint8_t {
  kSucceeded,
  kFailed,
  kCancelled,
  kStale,         // a step said its outcome is unknown
  kHandedBack,    // yielded on shutdown, or lost its lease for good
  kUnexecutable,  // failed because a command could not be executed
  kError,
};

class Runner {
 public:
  explicit Runner(const WorkOptions& o) : o_(o) {}
  int run();

 private:
  int preflight();
  AttemptEnd run_attempt(const json& claimed);
  // One step: started, run, reported. nullopt while the attempt runs on.
  std::optional<AttemptEnd> run_step(const std::string& step, size_t index);
  std::vector<std::string> step_argv(const std::string& step) const;
  std::vector<std::string> child_env(const std::string& step, size_t index) const;
  // A worker call under the current lease: its key names the job, attempt,
  // verb, step and the lease token, so a retry is answered once and a call
  // under a new lease never meets one made under the old.
  client::Response call(const std::string& verb, const std::string& step, json body);
  // Heartbeats when due; false when the lease is gone for good.
  bool keep_lease(bool* cancel_requested);
  bool reattach();
  AttemptEnd end_of(const json& job) const;
  void log(const char* stream_name, std::string_view line) const;

  const WorkOptions& o_;
  std::unique_ptr<client::Client> c_;
  std::string worker_;
  std::string handle_;
  std::string state_dir_;
  int lock_fd_ = -1;
  int unexecutable_in_a_row_ = 0;

  // The attempt being run.
  json job_;
  std::string job_id_;
  int attempt_ = 0;
  std::string token_;
  std::string attempt_dir_;
  Clock::time_point next_heartbeat_{};
  Clock::time_point last_success_{};
  uint64_t heartbeats_ = 0;
  bool cancel_seen_ = false;
  json summary_steps_ = json::array();
};

void Runner::log(const char* stream_name, std::string_view line) const {
  std::FILE* f = std::strcmp(stream_name, "err") == 0 ? stderr : stdout;
  std::fprintf(f, "job=%s attempt=%d %.*s\n", job_id_.c_str(), attempt_,
               static_cast<int>(line.size()), line.data());
  std::fflush(f);
}

int Runner::preflight() {
  if (o_.command.empty() && o_.step_commands.empty()) {
    std::fprintf(stderr, "runledger work: give a command after --, or --step NAME=CMD\n");
    return kExitUsage;
  }
  if (!o_.command.empty() && !executable_in_path(o_.command[0])) {
    std::fprintf(stderr, "runledger work: preflight: cannot execute %s\n", o_.command[0].c_str());
    return kExitConfig;
  }
  if (!o_.step_commands.empty() && ::access("/bin/sh", X_OK) != 0) {
    std::fprintf(stderr, "runledger work: preflight: /bin/sh cannot be executed\n");
    return kExitConfig;
  }
  const char* from_env = std::getenv("STATE_DIRECTORY");
  state_dir_ = !o_.state_dir.empty() ? o_.state_dir
               : from_env != nullptr ? from_env
                                     : ".runledger-work";
  // Its own alone: it holds every job's input and each step's output.
  if (Status p = make_private(state_dir_); !p.ok()) {
    std::fprintf(stderr, "runledger work: preflight: %s\n", p.message().c_str());
    return kExitConfig;
  }
  lock_fd_ = ::open((state_dir_ + "/lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd_ < 0) {
    std::fprintf(stderr, "runledger work: preflight: the state folder %s is not writable\n",
                 state_dir_.c_str());
    return kExitConfig;
  }
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    std::fprintf(stderr, "runledger work: the state folder %s is in use by another runner\n",
                 state_dir_.c_str());
    return kExitConfig;
  }
  if (Status s = client::Client::open(o_.client, &c_); !s.ok()) {
    std::fprintf(stderr, "runledger work: %s\n", s.message().c_str());
    return kExitUsage;
  }
  client::Response health = c_->get("/v1/health");
  if (health.status == 0) {
    std::fprintf(stderr, "runledger work: preflight: %s\n", health.failure.c_str());
    return kExitUnreachable;
  }
  worker_ = !o_.worker.empty() ? o_.worker : hostname() + "/" + std::to_string(::getpid());
  handle_ = hostname() + "/" + boot_id() + "/" + std::to_string(::getpid()) + "/" +
            start_ticks(::getpid());
  return kExitSucceeded;
}

client::Response Runner::call(const std::string& verb, const std::string& step, json body) {
  body["lease_token"] = token_;
  const std::string key = sha256_hex(job_id_ + "\n" + std::to_string(attempt_) + "\n" + verb +
                                     "\n" + step + "\n" + sha256_hex(token_))
                              .substr(0, 40);
  const std::string path = "/v1/jobs/" + client::path_segment(job_id_) +
                           (verb.rfind("heartbeat", 0) == 0 ? "/heartbeat" : "/" + verb);
  client::Response r = c_->send("POST", path, body, key);
  if (r.status != 0 && r.status < 500) last_success_ = Clock::now();
  return r;
}

bool Runner::reattach() {
  const std::string fresh_key = client::new_idempotency_key();
  client::Response r = c_->send("POST", "/v1/jobs/" + client::path_segment(job_id_) + "/reattach",
                                {{"worker", worker_},
                                 {"execution_handle", handle_},
                                 {"observed", "running"},
                                 {"lease_s", o_.lease_s}},
                                fresh_key);
  if (r.status != 200 || !r.json.contains("lease_token")) {
    log("err", "reattach refused: " + r.message());
    return false;
  }
  token_ = r.json["lease_token"].get<std::string>();
  log("err", "reattached under a new lease");
  return true;
}

bool Runner::keep_lease(bool* cancel_requested) {
  if (Clock::now() < next_heartbeat_) return true;
  next_heartbeat_ = Clock::now() + std::chrono::milliseconds(o_.lease_s * 1000 / 3);
  client::Response r =
      call("heartbeat-" + std::to_string(++heartbeats_), "", {{"lease_s", o_.lease_s}});
  if (r.status == 200) {
    *cancel_requested = r.json.value("cancel_requested", false);
    return true;
  }
  if (r.status == 409) return reattach();
  return true;  // no answer: the child keeps running; fencing decides
}

std::vector<std::string> Runner::step_argv(const std::string& step) const {
  auto own = o_.step_commands.find(step);
  if (own != o_.step_commands.end()) return {"/bin/sh", "-c", "exec " + own->second};
  std::vector<std::string> argv = o_.command;
  for (auto& a : argv) {
    if (a == "{step}") a = step;
  }
  return argv;
}

std::vector<std::string> Runner::child_env(const std::string& step, size_t index) const {
  std::vector<std::string> env;
  // Nothing of the runner's own settings (its token file, a token) goes on.
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "RUNLEDGER_", 10) != 0) env.emplace_back(*e);
  }
  std::string plan;
  for (const auto& s : job_["steps"]) plan += (plan.empty() ? "" : ",") + s.value("name", "");
  const std::string client_token = job_.value("client_token", "");
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"RUNLEDGER_JOB_ID", job_id_},
           {"RUNLEDGER_KIND", job_.value("kind", "")},
           {"RUNLEDGER_TARGET", job_.value("target", "")},
           {"RUNLEDGER_ATTEMPT", std::to_string(attempt_)},
           {"RUNLEDGER_STEP", step},
           {"RUNLEDGER_STEP_INDEX", std::to_string(index + 1)},
           {"RUNLEDGER_PLAN", plan},
           {"RUNLEDGER_CLIENT_TOKEN", client_token},
           {"RUNLEDGER_STEP_TOKEN", client_token + "-" + step},
           {"RUNLEDGER_WORKER", worker_},
           {"RUNLEDGER_SERVER", c_->server()},
           {"RUNLEDGER_INPUT_FILE", attempt_dir_ + "/input.json"},
           {"RUNLEDGER_PRIOR_OUTPUTS_FILE", attempt_dir_ + "/prior_outputs.json"},
           {"RUNLEDGER_RESULT_FILE", attempt_dir_ + "/" + step + ".result.json"},
           {"RUNLEDGER_CANCEL_FILE", attempt_dir_ + "/cancel"}}) {
    env.push_back(name + "=" + value);
  }
  return env;
}

AttemptEnd Runner::end_of(const json& job) const {
  const std::string state = job.value("state", "");
  if (state == "SUCCEEDED") return AttemptEnd::kSucceeded;
  if (state == "CANCELLED") return AttemptEnd::kCancelled;
  if (state == "STALE") return AttemptEnd::kStale;
  if (state == "YIELDED") return AttemptEnd::kHandedBack;
  // FAILED, or a new attempt queued by the retry rule: this one failed.
  return AttemptEnd::kFailed;
}

std::optional<AttemptEnd> Runner::run_step(const std::string& step, size_t index) {
  client::Response started =
      call("steps/" + client::path_segment(step) + "/start", step, json::object());
  if (started.status == 409 && started.json.value("code", "") == "cancelled") {
    return AttemptEnd::kCancelled;
  }
  if (started.status != 200) {
    log("err", "step " + step + " could not start: " + started.message());
    return AttemptEnd::kError;
  }
  const std::vector<std::string> argv = step_argv(step);
  if (argv.empty()) {
    client::Response r = call("steps/" + client::path_segment(step) + "/failed", step,
                              {{"error", "no command for step"}, {"retryable", false}});
    if (r.status != 200) return AttemptEnd::kError;
    job_ = r.json;
    return end_of(job_);
  }
  const std::string result_file = attempt_dir_ + "/" + step + ".result.json";
  std::error_code ec;
  fs::remove(result_file, ec);
  std::unique_ptr<StepProcess> child;
  const auto began = Clock::now();
  if (Status s = StepProcess::start(argv, child_env(step, index), &child); !s.ok()) {
    log("err", "step " + step + ": " + s.ToString());
    return AttemptEnd::kError;
  }
  std::string tail;
  auto on_line = [&](int stream, std::string_view line) {
    const std::string text = "step=" + step + " " + std::string(line);
    log(stream == 2 ? "err" : "out", text);
    tail.append(line).push_back('\n');
    if (tail.size() > o_.tail_bytes) tail.erase(0, tail.size() - o_.tail_bytes);
  };
  const auto fence_after =
      o_.fence_after.count() > 0
          ? o_.fence_after
          : std::max<std::chrono::milliseconds>(std::chrono::milliseconds(o_.lease_s * 10'000),
                                                std::chrono::seconds(60));
  std::optional<Clock::time_point> drain_until;
  bool interrupted = false;
  bool fenced = false;
  while (!child->pump(kTick, on_line)) {
    bool cancel = false;
    if (!keep_lease(&cancel)) {
      child->stop(o_.grace, on_line);
      return AttemptEnd::kHandedBack;
    }
    if (cancel && !cancel_seen_) {
      cancel_seen_ = true;
      write_file(attempt_dir_ + "/cancel", "");
      if (o_.cancel_interrupt) {
        child->stop(o_.grace, on_line);
        client::Response acked = call("cancel-ack", step, json::object());
        log("err", "cancelled: step " + step + " interrupted");
        return acked.status == 200 ? AttemptEnd::kCancelled : AttemptEnd::kError;
      }
    }
    const int signals = g_stop_signals.load();
    if (signals > 0 && !drain_until) drain_until = Clock::now() + o_.drain;
    if ((drain_until && Clock::now() >= *drain_until) || signals > 1) interrupted = true;
    if (o_.step_timeout.count() > 0 && Clock::now() - began >= o_.step_timeout) interrupted = true;
    if (Clock::now() - last_success_ >= fence_after) fenced = true;
    if (interrupted || fenced) {
      child->stop(o_.grace, on_line);
      break;
    }
  }
  const int orphans = child->stop_orphans(o_.grace);
  child->finish_output(std::chrono::milliseconds(500), on_line);
  StepExit exit;
  exit.exit_code = child->exit_code();
  exit.signal = child->killed_by();
  exit.duration_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - began).count();
  exit.orphans_killed = orphans;
  exit.output_tail = tail;
  if (fs::exists(result_file)) exit.result_file = read_file(result_file);
  summary_steps_.push_back({{"name", step},
                            {"exit_code", exit.exit_code ? json(*exit.exit_code) : json(nullptr)},
                            {"duration_ms", exit.duration_ms}});
  if (fenced) {
    log("err", "no answer from the server for too long: step " + step + " stopped (fenced)");
    return AttemptEnd::kHandedBack;
  }
  StepReport report;
  if (interrupted && g_stop_signals.load() > 0) {
    // Stopped mid-way: what it produced is unknown.
    report.kind = StepReport::Kind::kOutcomeUnknown;
    report.unknown_kind = "RESULT_UNKNOWN";
    report.detail = "step " + step + " was interrupted when the runner stopped";
  } else if (interrupted) {
    report.kind = StepReport::Kind::kFailed;
    report.error = "timed out after " + std::to_string(o_.step_timeout.count() / 1000) + "s";
  } else {
    report = step_report(exit, o_.retryable_exits);
  }
  const bool unexecutable = !child->signalled_by_runner() && exit.exit_code &&
                            (*exit.exit_code == 126 || *exit.exit_code == 127);
  unexecutable_in_a_row_ = unexecutable ? unexecutable_in_a_row_ + 1 : 0;
  client::Response r;
  switch (report.kind) {
    case StepReport::Kind::kDone:
      r = call("steps/" + client::path_segment(step) + "/done", step, {{"output", report.output}});
      break;
    case StepReport::Kind::kFailed:
      r = call("steps/" + client::path_segment(step) + "/failed", step,
               {{"error", report.error}, {"retryable", report.retryable}});
      break;
    case StepReport::Kind::kOutcomeUnknown:
      r = call("outcome-unknown", step, {{"kind", report.unknown_kind}, {"detail", report.detail}});
      break;
  }
  if (r.status != 200) {
    log("err", "step " + step + " could not be reported: " + r.message());
    return AttemptEnd::kError;
  }
  job_ = r.json;
  if (report.kind == StepReport::Kind::kOutcomeUnknown) {
    return interrupted ? AttemptEnd::kHandedBack : AttemptEnd::kStale;
  }
  if (job_.value("state", "") != "RUNNING" || job_.value("attempt", 0) != attempt_) {
    return unexecutable && end_of(job_) == AttemptEnd::kFailed ? AttemptEnd::kUnexecutable
                                                               : end_of(job_);
  }
  return std::nullopt;
}

AttemptEnd Runner::run_attempt(const json& claimed) {
  job_ = claimed["job"];
  job_id_ = job_.value("id", "");
  attempt_ = job_.value("attempt", 0);
  token_ = claimed.value("lease_token", "");
  cancel_seen_ = false;
  heartbeats_ = 0;
  summary_steps_ = json::array();
  last_success_ = Clock::now();
  next_heartbeat_ = Clock::now();
  attempt_dir_ = state_dir_ + "/" + job_id_ + "-a" + std::to_string(attempt_);
  std::error_code ec;
  fs::create_directories(attempt_dir_, ec);
  write_file(attempt_dir_ + "/input.json", job_.contains("input") ? job_["input"].dump() : "null");
  json prior = json::object();
  for (const auto& s : job_["steps"]) {
    const std::string state = s.value("state", "");
    if (state == "DONE" || state == "REUSED")
      prior[s.value("name", "")] = s.value("output", json());
  }
  write_file(attempt_dir_ + "/prior_outputs.json", prior.dump());

  client::Response started = call("start", "", {{"execution_handle", handle_}});
  if (started.status == 409 && started.json.value("code", "") == "cancelled") {
    return AttemptEnd::kCancelled;
  }
  if (started.status != 200) {
    log("err", "the attempt could not start: " + started.message());
    return AttemptEnd::kError;
  }
  job_ = started.json;
  const json steps = job_["steps"];
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].value("state", "") != "PENDING") continue;  // done or reused before
    if (g_stop_signals.load() > 0) {
      // Between two steps on shutdown: hand the attempt back, keeping its done steps.
      client::Response y = call("yield", "", {{"reason", "the worker is stopping"}});
      if (y.status == 200) job_ = y.json;
      return AttemptEnd::kHandedBack;
    }
    if (auto end = run_step(steps[i].value("name", ""), i)) return *end;
  }
  return end_of(job_);
}

int Runner::run() {
  if (int code = preflight(); code != kExitSucceeded) return code;
  struct sigaction stop {};
  stop.sa_handler = on_stop_signal;
  ::sigaction(SIGTERM, &stop, nullptr);
  ::sigaction(SIGINT, &stop, nullptr);
  struct sigaction tstp {};
  tstp.sa_handler = on_tstp;
  ::sigaction(SIGTSTP, &tstp, nullptr);
  for (;;) {
    if (g_stop_signals.load() > 0 || g_no_more_claims.load()) return kExitSucceeded;
    client::Response claimed = c_->send(
        "POST", "/v1/jobs/claim",
        {{"worker", worker_}, {"kinds", o_.kinds}, {"lease_s", o_.lease_s}, {"wait_s", o_.wait_s}});
    if (claimed.status == 204) {
      if (o_.once) return kExitSucceeded;
      continue;
    }
    if (claimed.status == 0 || claimed.status == 503) {
      std::fprintf(stderr, "runledger work: claim: %s\n", claimed.message().c_str());
      if (o_.once) return kExitUnreachable;
      std::this_thread::sleep_for(std::chrono::seconds(1));
      continue;
    }
    if (claimed.status != 200) {
      std::fprintf(stderr, "runledger work: claim refused: %s\n", claimed.message().c_str());
      return kExitConfig;
    }
    const AttemptEnd end = run_attempt(claimed.json);
    if (o_.summary_json) {
      std::printf("%s\n", json{{"job", job_id_},
                               {"attempt", attempt_},
                               {"state", job_.value("state", "")},
                               {"steps", summary_steps_}}
                              .dump()
                              .c_str());
      std::fflush(stdout);
    }
    if (unexecutable_in_a_row_ >= kUnexecutableInARowMax) {
      std::fprintf(stderr,
                   "runledger work: %d commands in a row could not be executed: no more claims\n",
                   unexecutable_in_a_row_);
      return kExitConfig;
    }
    if (!o_.once) {
      if (end == AttemptEnd::kError) std::this_thread::sleep_for(std::chrono::seconds(1));
      continue;
    }
    switch (end) {
      case AttemptEnd::kSucceeded:
        return kExitSucceeded;
      case AttemptEnd::kFailed:
      case AttemptEnd::kUnexecutable:
        return kExitFailed;
      case AttemptEnd::kCancelled:
        return kExitCancelled;
      case AttemptEnd::kStale:
        return kExitStale;
      case AttemptEnd::kHandedBack:
        return kExitTryLater;
      case AttemptEnd::kError:
        return kExitInternal;
    }
    return kExitInternal;
  }
}

}  // namespace

int run_worker(const WorkOptions& options) {
  Runner runner(options);
  return runner.run();
}

}  // namespace runledger::worker

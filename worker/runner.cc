#include "worker/runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <regex>
#include <sstream>
#include <thread>

#include "base/sha256.h"
#include "events/private_folder.h"
#include "worker/journal.h"
#include "worker/keeper.h"
#include "worker/step_outcome.h"

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
// SIGUSR1: print what each slot does.
std::atomic<bool> g_status_wanted{false};

// Set by inject_relaunch_fault() (runner.h) in a test build only.
bool g_relaunch_fault = false;

void on_stop_signal(int) { g_stop_signals.fetch_add(1); }
void on_tstp(int) { g_no_more_claims = true; }
void on_usr1(int) { g_status_wanted = true; }

// The wall clock in ns: the --summary timings a benchmark compares with a
// step's own clock.
int64_t unix_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Three commands in a row that could not be executed stop the runner: a
// broken host must not burn every job's attempts.
constexpr int kUnexecutableInARowMax = 3;
// How often the runner looks at its step, the clock and its signals when
// nothing wakes it earlier (a step's end wakes it at once).
constexpr std::chrono::milliseconds kTick{100};
// The stream of the runner's own lines in --log-format json (a step's are
// "out" and "err").
constexpr const char* kRunnerStream = "runner";
// How long a record may take to appear once the keeper was asked to stop
// the step, beyond the grace: past it the keeper is taken for dead.
constexpr std::chrono::milliseconds kRecordWaitExtra{5000};
// How often a claim that waits for work looks for a stop signal.
constexpr auto kClaimStopCheck = std::chrono::milliseconds(20);
// A line longer than this is passed on in pieces.
constexpr size_t kLineBytesMax = 64 * 1024;
constexpr size_t kReadChunk = 64 * 1024;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool executable_in_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    dir += '/';
    dir += name;
    if (::access(dir.c_str(), X_OK) == 0) return true;
  }
  return false;
}

// The program a --step command runs (`exec CMD`, where even NAME=value is
// the program's name): its first word, unquoted. Empty where only the shell
// can tell (an expansion, a redirection or a glob in it).
std::string program_of_step_command(const std::string& cmd) {
  size_t i = cmd.find_first_not_of(" \t");
  if (i == std::string::npos) return "";
  std::string word;
  while (i < cmd.size() && cmd[i] != ' ' && cmd[i] != '\t') {
    const char c = cmd[i];
    if (c == '\'' || c == '"') {
      const size_t end = cmd.find(c, i + 1);
      if (end == std::string::npos) return "";
      const std::string quoted = cmd.substr(i + 1, end - i - 1);
      if (c == '"' && quoted.find_first_of("$`\\") != std::string::npos) return "";
      word += quoted;
      i = end + 1;
    } else if (c == '\\' && i + 1 < cmd.size()) {
      word += cmd[i + 1];
      i += 2;
    } else if (std::strchr("$`*?[~<>|;&(){}#!\\", c) != nullptr) {
      return "";
    } else {
      word += c;
      ++i;
    }
  }
  return word;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// What RUNLEDGER_PRIOR_OUTPUTS_FILE holds: {"<step>": output} of every DONE or
// REUSED step of `job`.
std::string prior_outputs_text(const json& job) {
  json prior = json::object();
  for (const auto& s : job["steps"]) {
    const std::string state = s.value("state", "");
    if (state == "DONE" || state == "REUSED")
      prior[s.value("name", "")] = s.value("output", json());
  }
  return prior.dump();
}

// Follows a file a step appends to, line by line, from its start.
class FileTail {
 public:
  explicit FileTail(std::string path) : path_(std::move(path)) {}
  ~FileTail() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileTail(const FileTail&) = delete;
  FileTail& operator=(const FileTail&) = delete;

  template <typename Sink>
  void pump(const Sink& on_line) {
    if (fd_ < 0) fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return;
    char buf[kReadChunk];
    for (ssize_t got; (got = ::read(fd_, buf, sizeof buf)) > 0;) {
      partial_.append(buf, static_cast<size_t>(got));
      size_t start = 0;
      for (size_t nl; (nl = partial_.find('\n', start)) != std::string::npos; start = nl + 1) {
        on_line(std::string_view(partial_).substr(start, nl - start));
      }
      partial_.erase(0, start);
      if (partial_.size() > kLineBytesMax) {
        on_line(partial_);
        partial_.clear();
      }
    }
  }
  template <typename Sink>
  void finish(const Sink& on_line) {
    pump(on_line);
    if (!partial_.empty()) on_line(partial_);
    partial_.clear();
  }

 private:
  std::string path_;
  int fd_ = -1;
  std::string partial_;
};

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

// Ends a claim's long poll when a stop signal comes (SIGTERM, SIGINT,
// SIGTSTP) rather than after up to --wait-s: a thread of the runner's
// lifetime that looks at the signals every kClaimStopCheck while a claim
// waits and sleeps otherwise, so that a claim's reply waits for nothing.
class ClaimStopper {
 public:
  explicit ClaimStopper(client::Client* c) : c_(c), thread_([this] { loop(); }) {}
  ~ClaimStopper() {
    {
      std::lock_guard<std::mutex> lock(m_);
      quit_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }
  ClaimStopper(const ClaimStopper&) = delete;
  ClaimStopper& operator=(const ClaimStopper&) = delete;

  // Once waiting(false) returns, the claim's call is never aborted.
  void waiting(bool w) {
    {
      std::lock_guard<std::mutex> lock(m_);
      waiting_ = w;
    }
    if (w) cv_.notify_one();
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(m_);
    while (!quit_) {
      if (!waiting_) {
        cv_.wait(lock, [this] { return quit_ || waiting_; });
        continue;
      }
      if (g_stop_signals.load() > 0 || g_no_more_claims.load()) c_->abort();
      cv_.wait_for(lock, kClaimStopCheck);
    }
  }

  client::Client* c_;
  std::mutex m_;
  std::condition_variable cv_;
  bool waiting_ = false;
  bool quit_ = false;
  std::thread thread_;  // last: it starts once the rest is there
};

// Why the runner asked the keeper to stop a step.
enum class StopReason : uint8_t { kNone, kCancel, kShutdown, kTimeout, kFenced, kLeaseLost };

class Runner {
 public:
  explicit Runner(const WorkOptions& o) : o_(o) {}
  int run();
  // run() but for the spare keeper's end.
  int claim_and_run();

 private:
  int preflight();
  // The claim journaled before it is sent, sent again after a lost reply.
  client::Response claim();
  AttemptEnd run_attempt(const json& claimed);
  // Runs the attempt's pending steps from `job_` on; the keeper is spawned
  // when none runs.
  AttemptEnd run_steps();
  std::optional<AttemptEnd> run_step(const std::string& step, size_t index);
  // Watches `step` under keeper_ until its record, then reports it.
  std::optional<AttemptEnd> watch_step(const std::string& step, Clock::time_point began);
  std::optional<AttemptEnd> report_step(const std::string& step, const StepRecord& rec,
                                        StopReason stopped, const std::string& tail);
  // The report of a step whose lease is gone: reattach with what was seen.
  std::optional<AttemptEnd> report_by_reattach(const std::string& step, int exit_code,
                                               const StepReport& report);
  // The attempt an earlier runner (or this one, fenced) left in the journal.
  // False while the server cannot be reached.
  bool settle();
  std::optional<AttemptEnd> settle_running_step(const std::string& step);
  std::vector<std::string> step_argv(const std::string& step) const;
  std::vector<std::string> child_env(const std::string& step, size_t index) const;
  // A call under the attempt's lease; no try of it begins after `give_up_at`.
  client::Response call(const std::string& verb, const std::string& step, json body,
                        Clock::time_point give_up_at = Clock::time_point::max());
  // A step report: journaled first, so that a runner started again sends
  // it again with the same key and body if its reply was lost.
  client::Response report(const std::string& verb, const std::string& step, json body);
  bool keep_lease(bool* cancel_requested);
  bool reattach();
  AttemptEnd end_of(const json& job) const;
  // Takes `job` as the attempt's view; true while the attempt runs on.
  bool goes_on(const json& job);
  // The attempt's journal; durably, or into the page cache for
  // prepare_folder() to make durable.
  void journal_attempt(bool durably = true);
  // Off the runner's thread, while `start` and the first step's start are
  // sent: the attempt's folder and files, the journal made durable (the
  // claim file goes only then), and the first pending step's request.
  void prepare_folder();
  // Waits for prepare_folder(); true when the request of `step` is written.
  bool folder_prepared(const std::string& step);
  void end_attempt();
  // Removes the folders of attempts that are over beyond the newest
  // --keep-attempts.
  void prune_attempt_folders() const;
  void log(const char* stream_name, const std::string& step, std::string_view line) const;
  void print_status() const;
  std::chrono::milliseconds fence_after() const;

  const WorkOptions& o_;
  std::unique_ptr<client::Client> c_;
  // Made by the first claim that waits; goes before c_, which it uses.
  std::unique_ptr<ClaimStopper> claim_stopper_;
  std::string worker_;
  std::string state_dir_;
  int lock_fd_ = -1;
  int unexecutable_in_a_row_ = 0;

  // The attempt being run.
  json job_;
  std::string job_id_;
  int attempt_ = 0;
  std::string token_;
  std::string handle_;
  std::string attempt_dir_;
  std::unique_ptr<Keeper> keeper_;
  // Started while the claim waits, for the next attempt (Keeper::spawn_spare).
  std::unique_ptr<Keeper> spare_keeper_;
  std::string current_step_;
  Clock::time_point next_heartbeat_{};
  Clock::time_point last_success_{};
  Clock::time_point lease_deadline_{};
  uint64_t heartbeats_ = 0;
  bool cancel_seen_ = false;
  int64_t claimed_unix_ns_ = 0;
  bool keep_journal_ = false;  // fenced: the step's end is reported once the server answers
  json summary_steps_ = json::array();
  // prepare_folder()'s thread, and the step whose request it wrote.
  std::thread preparing_;
  std::string prepared_step_;
  // The text of the attempt's prior outputs file, as last written.
  std::string prior_written_;
};

// A line of the runner's own about no job in particular: `runledger work:
// TEXT` on stderr, or with --log-format json {"stream": "runner", "line"}.
void runner_line(const WorkOptions& o, const std::string& text) {
  if (o.log_json) {
    json j = {{"stream", kRunnerStream}, {"line", text}};
    if (o.slot > 0) j["slot"] = o.slot;
    std::fprintf(stderr, "%s\n", j.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
  } else {
    std::fprintf(stderr, "runledger work: %s\n", text.c_str());
  }
  std::fflush(stderr);
}

std::string journal_path(const std::string& state_dir) { return state_dir + "/attempt.json"; }

void Runner::log(const char* stream_name, const std::string& step, std::string_view line) const {
  std::FILE* f = std::strcmp(stream_name, "out") == 0 ? stdout : stderr;
  if (o_.log_json) {
    json j = {{"job", job_id_}, {"attempt", attempt_}, {"stream", stream_name}};
    if (!step.empty()) j["step"] = step;
    j["line"] = std::string(line);
    const std::string text = j.dump(-1, ' ', false, json::error_handler_t::replace);
    std::fprintf(f, "%s\n", text.c_str());
  } else if (step.empty()) {
    std::fprintf(f, "job=%s attempt=%d %.*s\n", job_id_.c_str(), attempt_,
                 static_cast<int>(line.size()), line.data());
  } else {
    std::fprintf(f, "job=%s attempt=%d step=%s %.*s\n", job_id_.c_str(), attempt_, step.c_str(),
                 static_cast<int>(line.size()), line.data());
  }
  std::fflush(f);
}

void Runner::print_status() const {
  if (job_id_.empty()) {
    runner_line(o_, fmt::format("slot {}: idle", o_.slot));
    return;
  }
  pid_t child = 0;
  if (!current_step_.empty()) {
    if (auto pid = read_json_file(step_file(attempt_dir_, current_step_, ".pid"))) {
      child = pid->value("pid", 0);
    }
  }
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(lease_deadline_ - Clock::now());
  runner_line(o_,
              fmt::format("slot {}: job={} attempt={} step={} child_pid={} lease_deadline_in_ms={}",
                          o_.slot, job_id_, attempt_, current_step_.empty() ? "-" : current_step_,
                          child, left.count()));
}

std::chrono::milliseconds Runner::fence_after() const {
  return o_.fence_after.count() > 0
             ? o_.fence_after
             : std::max<std::chrono::milliseconds>(std::chrono::milliseconds(o_.lease_s * 10'000),
                                                   std::chrono::seconds(60));
}

int Runner::preflight() {
  if (o_.command.empty() && o_.step_commands.empty()) {
    runner_line(o_, "give a command after --, or --step NAME=CMD");
    return kExitUsage;
  }
  if (!o_.command.empty() && !executable_in_path(o_.command[0])) {
    runner_line(o_, fmt::format("preflight: cannot execute {}", o_.command[0]));
    return kExitConfig;
  }
  if (!o_.step_commands.empty() && ::access("/bin/sh", X_OK) != 0) {
    runner_line(o_, "preflight: /bin/sh cannot be executed");
    return kExitConfig;
  }
  for (const auto& [step, cmd] : o_.step_commands) {
    const std::string program = program_of_step_command(cmd);
    if (!program.empty() && !executable_in_path(program)) {
      runner_line(
          o_, fmt::format("preflight: cannot execute {} (the command of step {})", program, step));
      return kExitConfig;
    }
  }
  if (keeper_program().empty()) {
    runner_line(o_,
                fmt::format("preflight: {} is neither beside runledger nor in ../lib/runledger/",
                            kKeeperProgram));
    return kExitConfig;
  }
  const char* from_env = std::getenv("STATE_DIRECTORY");
  state_dir_ = !o_.state_dir.empty() ? o_.state_dir
               : from_env != nullptr ? from_env
                                     : ".runledger-work";
  // Its own alone: it holds every job's input, each step's output and the
  // lease token of the attempt it runs.
  if (Status p = make_private(state_dir_); !p.ok()) {
    runner_line(o_, fmt::format("preflight: {}", p.message()));
    return kExitConfig;
  }
  lock_fd_ = ::open((state_dir_ + "/lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd_ < 0) {
    runner_line(o_, fmt::format("preflight: the state folder {} is not writable", state_dir_));
    return kExitConfig;
  }
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    runner_line(o_, fmt::format("the state folder {} is in use by another runner", state_dir_));
    return kExitConfig;
  }
  if (Status s = client::Client::open(o_.client, &c_); !s.ok()) {
    runner_line(o_, fmt::format("{}", s.message()));
    return kExitUsage;
  }
  client::Response health = c_->get("/v1/health");
  if (health.status == 0) {
    runner_line(o_, fmt::format("preflight: {}", health.failure));
    return kExitUnreachable;
  }
  worker_ = !o_.worker.empty() ? o_.worker : host_name() + "/" + std::to_string(::getpid());
  return kExitSucceeded;
}

client::Response Runner::call(const std::string& verb, const std::string& step, json body,
                              Clock::time_point give_up_at) {
  body["lease_token"] = token_;
  const std::string key = sha256_hex(job_id_ + "\n" + std::to_string(attempt_) + "\n" + verb +
                                     "\n" + step + "\n" + sha256_hex(token_))
                              .substr(0, 40);
  const std::string path = "/v1/jobs/" + client::path_segment(job_id_) +
                           (verb.rfind("heartbeat", 0) == 0 ? "/heartbeat" : "/" + verb);
  const auto sent = Clock::now();
  client::Response r = c_->send("POST", path, body, key, give_up_at);
  if (r.status != 0 && r.status < 500) last_success_ = Clock::now();
  if (r.status == 200) lease_deadline_ = sent + std::chrono::seconds(o_.lease_s);
  return r;
}

client::Response Runner::report(const std::string& verb, const std::string& step, json body) {
  if (std::optional<json> j = read_json_file(journal_path(state_dir_))) {
    (*j)["report"] = {{"verb", verb}, {"step", step}, {"body", body}};
    // For a runner killed before the reply: this boot's page cache is
    // enough (after a reboot the keeper's fsynced record is reported anew).
    (void)write_json_whole(journal_path(state_dir_), *j);
  }
  return call(verb, step, std::move(body));
}

bool Runner::reattach() {
  client::Response r = c_->send("POST", "/v1/jobs/" + client::path_segment(job_id_) + "/reattach",
                                {{"worker", worker_},
                                 {"execution_handle", handle_},
                                 {"observed", "running"},
                                 {"lease_s", o_.lease_s}});
  if (r.status != 200 || !r.json.contains("lease_token")) {
    log(kRunnerStream, "", "reattach refused: " + r.message());
    return false;
  }
  token_ = r.json["lease_token"].get<std::string>();
  last_success_ = Clock::now();
  lease_deadline_ = Clock::now() + std::chrono::seconds(o_.lease_s);
  if (r.json.contains("job")) job_ = r.json["job"];
  journal_attempt();
  log(kRunnerStream, "", "reattached under a new lease");
  return true;
}

bool Runner::keep_lease(bool* cancel_requested) {
  if (Clock::now() < next_heartbeat_) return true;
  // From when it was due, not from when the loop came round to it.
  next_heartbeat_ += std::chrono::milliseconds(o_.lease_s * 1000 / 3);
  if (next_heartbeat_ < Clock::now()) {
    next_heartbeat_ = Clock::now() + std::chrono::milliseconds(o_.lease_s * 1000 / 3);
  }
  // Retries stop where fencing begins: the step is stopped on time.
  client::Response r = call("heartbeat-" + std::to_string(++heartbeats_), "",
                            {{"lease_s", o_.lease_s}}, last_success_ + fence_after());
  if (r.status == 200) {
    *cancel_requested = r.json.value("cancel_requested", false);
    return true;
  }
  if (r.status == 409 || r.status == 404) return reattach();
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
           {"RUNLEDGER_STEP_TOKEN", fmt::format("{}-{}", client_token, step)},
           {"RUNLEDGER_WORKER", worker_},
           {"RUNLEDGER_SERVER", c_->server()},
           {"RUNLEDGER_INPUT_FILE", attempt_dir_ + "/input.json"},
           {"RUNLEDGER_PRIOR_OUTPUTS_FILE", attempt_dir_ + "/prior_outputs.json"},
           {"RUNLEDGER_RESULT_FILE", attempt_dir_ + "/" + step + ".result.json"},
           {"RUNLEDGER_CANCEL_FILE", attempt_dir_ + "/cancel"}}) {
    env.push_back(fmt::format("{}={}", name, value));
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

void Runner::journal_attempt(bool durably) {
  json j = {{"job", job_id_},        {"attempt", attempt_},
            {"lease_token", token_}, {"lease_token_sha256", sha256_hex(token_)},
            {"handle", handle_},     {"dir", attempt_dir_},
            {"worker", worker_}};
  if (keeper_) j["keeper"] = keeper_->id().to_json();
  if (std::optional<json> old = read_json_file(journal_path(state_dir_))) {
    if (old->value("job", "") == job_id_ && old->value("attempt", 0) == attempt_ &&
        old->contains("keeper") && !keeper_) {
      j["keeper"] = (*old)["keeper"];
    }
  }
  const Status s = durably ? write_json_durably(journal_path(state_dir_), j)
                           : write_json_whole(journal_path(state_dir_), j);
  if (!s.ok()) log(kRunnerStream, "", "journal: " + s.ToString());
}

void Runner::prepare_folder() {
  std::string input = job_.contains("input") ? job_["input"].dump() : "null";
  prior_written_ = prior_outputs_text(job_);
  std::string first_step;
  std::vector<std::string> argv;
  std::vector<std::string> env;
  for (size_t i = 0; i < job_["steps"].size(); ++i) {
    if (job_["steps"][i].value("state", "") != "PENDING") continue;
    first_step = job_["steps"][i].value("name", "");
    argv = step_argv(first_step);
    env = child_env(first_step, i);
    break;
  }
  if (argv.empty()) first_step.clear();  // failed as "no command for step" instead
  prepared_step_.clear();
  // Everything the thread reads is its own copy: the runner's thread goes on
  // with `start` meanwhile.
  preparing_ =
      std::thread([this, dir = attempt_dir_, input = std::move(input), prior = prior_written_,
                   journal = journal_path(state_dir_), claim = state_dir_ + "/claim.json",
                   step = std::move(first_step), argv = std::move(argv), env = std::move(env)] {
        std::error_code ec;
        fs::remove_all(dir, ec);  // a yielded attempt claimed again starts afresh
        fs::create_directories(dir, ec);
        write_file(dir + "/input.json", input);
        write_file(dir + "/prior_outputs.json", prior);
        // The lease is in the journal for good now; the claim file is not needed.
        if (sync_written(journal).ok()) remove_file(claim);
        if (!step.empty() && Keeper::write_request(dir, step, argv, env).ok())
          prepared_step_ = step;
      });
}

bool Runner::folder_prepared(const std::string& step) {
  if (preparing_.joinable()) preparing_.join();
  return !prepared_step_.empty() && prepared_step_ == step;
}

void Runner::end_attempt() {
  (void)folder_prepared("");
  if (keeper_) keeper_->finish();
  keeper_.reset();
  current_step_.clear();
  // A journal back after a crash names an attempt that is over: settle()
  // finds that and reports nothing.
  if (!keep_journal_) remove_file(journal_path(state_dir_));
  prune_attempt_folders();
}

std::string attempt_folder_name(const std::string& job_id, int attempt) {
  return job_id + "-a" + std::to_string(attempt);
}

void Runner::prune_attempt_folders() const {
  // The attempt still in the journal is not over: its folder stays.
  std::string journaled;
  if (std::optional<json> j = read_json_file(journal_path(state_dir_))) {
    journaled = fs::path(j->value("dir", "")).filename().string();
  }
  static const std::regex kAttemptFolder(R"(.+-a[0-9]+)");
  std::vector<std::pair<fs::file_time_type, fs::path>> over;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(state_dir_, ec)) {
    const std::string name = e.path().filename().string();
    if (!e.is_directory(ec) || name == journaled || !std::regex_match(name, kAttemptFolder)) {
      continue;
    }
    over.emplace_back(e.last_write_time(ec), e.path());
  }
  if (over.size() <= static_cast<size_t>(o_.keep_attempts)) return;
  // Newest first: a folder's time is that of the last file its steps wrote.
  std::sort(over.begin(), over.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = static_cast<size_t>(o_.keep_attempts); i < over.size(); ++i) {
    fs::remove_all(over[i].second, ec);
  }
}

bool Runner::goes_on(const json& job) {
  job_ = job;
  return job_.value("state", "") == "RUNNING" && job_.value("attempt", 0) == attempt_;
}

std::optional<AttemptEnd> Runner::report_by_reattach(const std::string& step, int exit_code,
                                                     const StepReport& rep) {
  json body = {{"worker", worker_}, {"execution_handle", handle_}, {"observed", "exited"},
               {"step", step},      {"exit_code", exit_code},      {"lease_s", o_.lease_s}};
  if (exit_code == 0 && rep.kind == StepReport::Kind::kDone) body["output"] = rep.output;
  if (rep.kind == StepReport::Kind::kFailed) body["retryable"] = rep.retryable;
  // The key names the step and its evidence: sent again, it is answered once.
  const std::string key =
      sha256_hex(job_id_ + "\n" + std::to_string(attempt_) + "\nreattach-exited\n" + step + "\n" +
                 std::to_string(exit_code) + "\n" + handle_)
          .substr(0, 40);
  client::Response r =
      c_->send("POST", "/v1/jobs/" + client::path_segment(job_id_) + "/reattach", body, key);
  if (r.status == 0 || r.status >= 500) {
    log(kRunnerStream, step, "the server does not answer: the step's end is reported later");
    keep_journal_ = true;
    return AttemptEnd::kHandedBack;
  }
  if (r.status != 200) {
    log(kRunnerStream, step, "the step's end could not be reported: " + r.message());
    return AttemptEnd::kHandedBack;
  }
  last_success_ = Clock::now();
  log(kRunnerStream, step, "reported by reattach, observed exit " + std::to_string(exit_code));
  if (r.json.contains("lease_token")) {
    token_ = r.json["lease_token"].get<std::string>();
    lease_deadline_ = Clock::now() + std::chrono::seconds(o_.lease_s);
  }
  const json job = r.json.value("job", json::object());
  if (goes_on(job)) {
    journal_attempt();
    return std::nullopt;
  }
  return end_of(job_);
}

std::optional<AttemptEnd> Runner::report_step(const std::string& step, const StepRecord& rec,
                                              StopReason stopped, const std::string& tail) {
  StepExit exit;
  exit.exit_code = rec.exit_code;
  exit.signal = rec.signal;
  exit.duration_ms = rec.duration_ms;
  exit.orphans_killed = rec.orphans_killed;
  exit.output_tail = tail;
  const std::string result_file = attempt_dir_ + "/" + step + ".result.json";
  if (fs::exists(result_file)) exit.result_file = read_file(result_file);
  summary_steps_.push_back({{"name", step},
                            {"exit_code", rec.exit_code ? json(*rec.exit_code) : json(nullptr)},
                            {"duration_ms", rec.duration_ms},
                            {"exec_unix_ns", rec.exec_unix_ns},
                            {"exited_unix_ns", rec.exited_unix_ns}});
  StepReport rep;
  if (rec.runner_died || stopped == StopReason::kShutdown) {
    // Stopped mid-way: what it produced is unknown.
    rep.kind = StepReport::Kind::kOutcomeUnknown;
    rep.unknown_kind = "RESULT_UNKNOWN";
    rep.detail = rec.runner_died
                     ? "step " + step + " was stopped mid-way: its runner or its keeper died"
                     : "step " + step + " was interrupted when the runner stopped";
  } else if (stopped == StopReason::kTimeout) {
    rep.kind = StepReport::Kind::kFailed;
    rep.error = "timed out after " + std::to_string(o_.step_timeout.count() / 1000) + "s";
  } else {
    rep = step_report(exit, o_.retryable_exits);
  }
  const bool unexecutable =
      !rec.stopped && rec.exit_code && (*rec.exit_code == 126 || *rec.exit_code == 127);
  unexecutable_in_a_row_ = unexecutable ? unexecutable_in_a_row_ + 1 : 0;
  const std::string seg = "steps/" + client::path_segment(step);
  client::Response r;
  switch (rep.kind) {
    case StepReport::Kind::kDone:
      r = report(seg + "/done", step, {{"output", rep.output}});
      break;
    case StepReport::Kind::kFailed:
      r = report(seg + "/failed", step, {{"error", rep.error}, {"retryable", rep.retryable}});
      break;
    case StepReport::Kind::kOutcomeUnknown:
      r = report("outcome-unknown", step, {{"kind", rep.unknown_kind}, {"detail", rep.detail}});
      break;
  }
  if (r.status == 409 || r.status == 404) {
    // The lease moved on (the runner was stopped, the server restarted past
    // it): the step's end is evidence the server still takes.
    return report_by_reattach(step, rec.code_for_reattach(), rep);
  }
  summary_steps_.back()["reported_unix_ns"] = unix_ns();
  if (r.status != 200) {
    log(kRunnerStream, step, "could not be reported: " + r.message());
    keep_journal_ = r.status == 0 || r.status >= 500;
    return AttemptEnd::kError;
  }
  if (rep.kind == StepReport::Kind::kOutcomeUnknown) {
    job_ = r.json;
    return stopped == StopReason::kShutdown ? AttemptEnd::kHandedBack : AttemptEnd::kStale;
  }
  if (goes_on(r.json)) return std::nullopt;
  return unexecutable && end_of(job_) == AttemptEnd::kFailed ? AttemptEnd::kUnexecutable
                                                             : end_of(job_);
}

std::optional<AttemptEnd> Runner::watch_step(const std::string& step, Clock::time_point began) {
  current_step_ = step;
  std::string tail;
  FileTail out(step_file(attempt_dir_, step, ".stdout"));
  FileTail err(step_file(attempt_dir_, step, ".stderr"));
  auto sink = [&](const char* stream) {
    return [&, stream](std::string_view line) {
      log(stream, step, line);
      tail.append(line).push_back('\n');
      if (tail.size() > o_.tail_bytes) tail.erase(0, tail.size() - o_.tail_bytes);
    };
  };
  std::optional<Clock::time_point> drain_until;
  std::optional<Clock::time_point> stop_sent;
  StopReason stopped = StopReason::kNone;
  auto stop = [&](StopReason why) {
    if (stopped != StopReason::kNone) return;
    stopped = why;
    stop_sent = Clock::now();
    keeper_->stop_step();
  };
  std::optional<StepRecord> rec;
  for (;;) {
    // Woken for the next heartbeat when it falls due, not up to a tick late.
    keeper_->wait_notice(std::clamp(
        std::chrono::duration_cast<std::chrono::milliseconds>(next_heartbeat_ - Clock::now()),
        std::chrono::milliseconds(1), kTick));
    out.pump(sink("out"));
    err.pump(sink("err"));
    if ((rec = keeper_->record(step))) break;
    if (g_status_wanted.exchange(false)) print_status();
    const bool keeper_gone = !keeper_->alive();
    const bool record_late = stop_sent && Clock::now() - *stop_sent > o_.grace + kRecordWaitExtra;
    if (keeper_gone || record_late) {
      if ((rec = keeper_->record(step))) break;
      // The keeper died without a record: stop what is left of the step.
      // It was stopped mid-way: what it produced is unknown.
      pid_t sid = 0;
      if (auto pid = read_json_file(step_file(attempt_dir_, step, ".pid"))) {
        if (pid->value("start", "") == start_ticks(pid->value("pid", 0)))
          sid = pid->value("pid", 0);
      }
      if (sid > 0) stop_session(sid, o_.grace);
      log(kRunnerStream, step, "its keeper died: the step was stopped, its result is unknown");
      StepRecord lost;
      lost.signal = SIGKILL;
      lost.stopped = true;
      lost.runner_died = true;
      rec = lost;
      break;
    }
    if (stopped == StopReason::kLeaseLost || stopped == StopReason::kFenced) continue;
    bool cancel = false;
    if (!keep_lease(&cancel)) {
      stop(StopReason::kLeaseLost);
      continue;
    }
    if (cancel && !cancel_seen_) {
      cancel_seen_ = true;
      write_file(attempt_dir_ + "/cancel", "");
      if (o_.cancel_interrupt) stop(StopReason::kCancel);
    }
    const int signals = g_stop_signals.load();
    if (signals > 0 && !drain_until) drain_until = Clock::now() + o_.drain;
    if ((drain_until && Clock::now() >= *drain_until) || signals > 1) stop(StopReason::kShutdown);
    if (o_.step_timeout.count() > 0 && Clock::now() - began >= o_.step_timeout) {
      stop(StopReason::kTimeout);
    }
    if (Clock::now() - last_success_ >= fence_after()) stop(StopReason::kFenced);
  }
  out.finish(sink("out"));
  err.finish(sink("err"));
  current_step_.clear();
  switch (stopped) {
    case StopReason::kLeaseLost:
      // The authority is gone: nothing more is reported for it.
      log(kRunnerStream, step, "the lease is gone: the step was stopped");
      return AttemptEnd::kHandedBack;
    case StopReason::kFenced:
      log(kRunnerStream, step,
          "no answer from the server for too long: the step was stopped (fenced)");
      {
        StepReport rep;
        rep.kind = StepReport::Kind::kFailed;
        keep_journal_ = true;  // until the server answers again
        // Tried at once; settle() tries again before the next claim.
        return report_by_reattach(step, rec->code_for_reattach(), rep);
      }
    case StopReason::kCancel: {
      client::Response acked = call("cancel-ack", step, json::object());
      log(kRunnerStream, step, "cancelled: the step was interrupted");
      if (acked.status == 200) job_ = acked.json;
      return acked.status == 200 ? AttemptEnd::kCancelled : AttemptEnd::kError;
    }
    case StopReason::kNone:
    case StopReason::kShutdown:
    case StopReason::kTimeout:
      break;
  }
  return report_step(step, *rec, stopped, tail);
}

std::optional<AttemptEnd> Runner::run_step(const std::string& step, size_t index) {
  const std::string seg = "steps/" + client::path_segment(step);
  client::Response started = call(seg + "/start", step, json::object());
  // Refused under a lease that expired meanwhile (the runner was stopped, the
  // server away): the code may be lease_mismatch or invalid_transition.
  if (started.status == 409 && started.json.value("code", "") != "cancelled" && reattach()) {
    started = call(seg + "/start", step, json::object());
  }
  if (started.status == 409 && started.json.value("code", "") == "cancelled") {
    job_ = started.json;
    return AttemptEnd::kCancelled;
  }
  if (started.status != 200) {
    log(kRunnerStream, step, "could not start: " + started.message());
    return AttemptEnd::kError;
  }
  const std::vector<std::string> argv = step_argv(step);
  if (argv.empty()) {
    client::Response r =
        report(seg + "/failed", step, {{"error", "no command for step"}, {"retryable", false}});
    if (r.status != 200) return AttemptEnd::kError;
    if (goes_on(r.json)) return std::nullopt;
    return end_of(job_);
  }
  bool request_written = folder_prepared(step);
  // Steps done since the folder was made (or by this attempt's runner before
  // a restart) add their outputs for this one to read.
  if (std::string prior = prior_outputs_text(job_); prior != prior_written_) {
    write_file(attempt_dir_ + "/prior_outputs.json", prior);
    prior_written_ = std::move(prior);
  }
  std::error_code ec;
  fs::remove(attempt_dir_ + "/" + step + ".result.json", ec);
  if (!keeper_ || !keeper_->alive()) {
    keeper_.reset();
    if (Status s = Keeper::spawn(attempt_dir_, o_.keeper_detached, o_.grace, &keeper_); !s.ok()) {
      log(kRunnerStream, step, "the keeper could not start: " + s.ToString());
      return AttemptEnd::kError;
    }
    journal_attempt();
  }
  const auto began = Clock::now();
  const Status asked = request_written ? keeper_->signal_request()
                                       : keeper_->run(step, argv, child_env(step, index));
  if (!asked.ok()) log(kRunnerStream, step, asked.ToString());
  return watch_step(step, began);
}

AttemptEnd Runner::run_steps() {
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

AttemptEnd Runner::run_attempt(const json& claimed) {
  job_ = claimed["job"];
  job_id_ = job_.value("id", "");
  attempt_ = job_.value("attempt", 0);
  token_ = claimed.value("lease_token", "");
  cancel_seen_ = false;
  keep_journal_ = false;
  heartbeats_ = 0;
  summary_steps_ = json::array();
  last_success_ = Clock::now();
  lease_deadline_ = Clock::now() + std::chrono::seconds(o_.lease_s);
  next_heartbeat_ = Clock::now();
  attempt_dir_ = state_dir_ + "/" + attempt_folder_name(job_id_, attempt_);
  // The keeper first: the execution handle `start` sends names it. It reads
  // its folder only when asked to run a step, after prepare_folder().
  Status spawned = Status::Invalid("no spare keeper");
  if (spare_keeper_ && spare_keeper_->alive()) spawned = spare_keeper_->assign(attempt_dir_);
  if (spawned.ok()) {
    keeper_ = std::move(spare_keeper_);
  } else {
    spare_keeper_.reset();
    spawned = Keeper::spawn(attempt_dir_, o_.keeper_detached, o_.grace, &keeper_);
  }
  if (!spawned.ok()) {
    remove_file(state_dir_ + "/claim.json");
    log(kRunnerStream, "", "the keeper could not start: " + spawned.ToString());
    return AttemptEnd::kError;
  }
  handle_ = keeper_->id().handle();
  // Journaled before `start` is sent, so that a runner killed after it finds
  // the attempt (the page cache outlives it); durable before the step runs.
  journal_attempt(/*durably=*/false);
  prepare_folder();

  client::Response started = call("start", "", {{"execution_handle", handle_}});
  if (started.status == 409 && started.json.value("code", "") == "cancelled") {
    job_ = started.json;
    return AttemptEnd::kCancelled;
  }
  if (started.status != 200) {
    log(kRunnerStream, "", "the attempt could not start: " + started.message());
    if (started.status == 0 || started.status >= 500) keep_journal_ = true;
    return AttemptEnd::kError;
  }
  job_ = started.json;
  return run_steps();
}

std::optional<AttemptEnd> Runner::settle_running_step(const std::string& step) {
  std::optional<json> j = read_json_file(journal_path(state_dir_));
  const ProcessId keeper_id = ProcessId::from_json(j ? j->value("keeper", json()) : json());
  keeper_ = Keeper::adopt(attempt_dir_, keeper_id);
  const bool this_boot = keeper_id.pid == 0 || keeper_id.this_boot();
  std::optional<StepRecord> rec = keeper_->record(step);
  if (!rec && keeper_->alive()) {
    if (g_relaunch_fault) {
      // Fault injection (runner.h): run the step again beside the one that runs.
      if (!reattach()) return AttemptEnd::kHandedBack;
      keeper_.reset();
      if (!Keeper::spawn(attempt_dir_, o_.keeper_detached, o_.grace, &keeper_).ok()) {
        return AttemptEnd::kError;
      }
      std::error_code ec;
      for (const char* suffix : {".pid", ".exit"})
        fs::remove(step_file(attempt_dir_, step, suffix), ec);
      size_t index = 0;
      for (size_t i = 0; i < job_["steps"].size(); ++i) {
        if (job_["steps"][i].value("name", "") == step) index = i;
      }
      (void)keeper_->run(step, step_argv(step), child_env(step, index));
      return watch_step(step, Clock::now());
    }
    // The step runs on under its keeper: carry on watching it.
    log(kRunnerStream, step, "its keeper still runs it: watching it again");
    bool cancel = false;
    next_heartbeat_ = Clock::now();
    if (!keep_lease(&cancel)) return AttemptEnd::kHandedBack;
    return watch_step(step, Clock::now());
  }
  if (!rec) {
    // Neither a record nor a keeper: stopped mid-way (its keeper died, the
    // host rebooted), or never seen running. Never taken as "not started".
    rec.emplace();
    rec->stopped = true;
    rec->runner_died = true;
    if (this_boot) {
      rec->signal = SIGKILL;  // its keeper's death killed it (keeper.h)
      if (auto pid = read_json_file(step_file(attempt_dir_, step, ".pid"))) {
        const pid_t sid = pid->value("pid", 0);
        if (pid->value("start", "") == start_ticks(sid)) stop_session(sid, o_.grace);
      }
    } else {
      rec->exit_code = 255;  // gone with the reboot: never reported as 0
    }
  }
  current_step_ = step;
  std::string tail;
  FileTail err(step_file(attempt_dir_, step, ".stderr"));
  err.finish([&](std::string_view line) {
    tail.append(line).push_back('\n');
    if (tail.size() > o_.tail_bytes) tail.erase(0, tail.size() - o_.tail_bytes);
  });
  return report_step(step, *rec, StopReason::kNone, tail);
}

bool Runner::settle() {
  std::optional<json> j = read_json_file(journal_path(state_dir_));
  if (!j) return true;
  job_id_ = j->value("job", "");
  attempt_ = j->value("attempt", 0);
  token_ = j->value("lease_token", "");
  handle_ = j->value("handle", "");
  attempt_dir_ = j->value("dir", "");
  prior_written_.clear();  // what the folder holds is written again before a step
  keep_journal_ = false;
  summary_steps_ = json::array();
  last_success_ = Clock::now();
  lease_deadline_ = Clock::now();
  client::Response got = c_->get("/v1/jobs/" + client::path_segment(job_id_));
  if (got.status == 0 || got.status >= 500) return false;
  job_ = got.json;
  const std::string state = job_.value("state", "");
  log(kRunnerStream, "", "settling what an earlier run left: the attempt is " + state);
  // A report sent and not answered: sent again, it is answered once.
  bool reported_unknown = false;
  if (j->contains("report") && job_.value("attempt", 0) == attempt_ &&
      (state == "RUNNING" || state == "STALE")) {
    const json& rep = (*j)["report"];
    client::Response r = call(rep.value("verb", ""), rep.value("step", ""), rep["body"]);
    if (r.status == 0 || r.status >= 500) return false;
    reported_unknown = r.status == 200 && rep.value("verb", "") == "outcome-unknown";
    // The kept reply shows the job as it was then: read it as it is now.
    got = c_->get("/v1/jobs/" + client::path_segment(job_id_));
    if (got.status == 0 || got.status >= 500) return false;
    job_ = got.json;
  }
  const std::string now_state = job_.value("state", "");
  std::optional<AttemptEnd> end;
  if (reported_unknown || job_.value("attempt", 0) != attempt_ ||
      (now_state != "LEASED" && now_state != "RUNNING" && now_state != "STALE")) {
    end = AttemptEnd::kHandedBack;  // over: nothing left to report
  } else if (now_state == "LEASED") {
    // Never started: given back.
    call("release", "", json::object());
    end = AttemptEnd::kHandedBack;
  } else {
    std::string running;
    for (const auto& st : job_["steps"]) {
      if (st.value("state", "") == "RUNNING") running = st.value("name", "");
    }
    if (!running.empty()) end = settle_running_step(running);
    if (!end || *end == AttemptEnd::kError) {
      // Between two steps, the lease kept or taken again: handed back.
      bool cancel = false;
      next_heartbeat_ = Clock::now();
      if (job_.value("state", "") == "STALE" ? reattach() : keep_lease(&cancel)) {
        client::Response y =
            call("yield", "", {{"reason", "the worker settled it after a restart"}});
        if (y.status == 200) job_ = y.json;
      }
      end = AttemptEnd::kHandedBack;
    }
  }
  // A step still running under a keeper of this attempt is stopped: nothing
  // runs for an attempt this runner no longer holds.
  if (auto k = read_json_file(journal_path(state_dir_))) {
    const ProcessId id = ProcessId::from_json(k->value("keeper", json()));
    if (id.alive() && (!keeper_ || keeper_->id().pid != id.pid)) ::kill(id.pid, SIGTERM);
  }
  end_attempt();
  if (keep_journal_) return false;
  job_id_.clear();
  return true;
}

client::Response Runner::claim() {
  const std::string path = state_dir_ + "/claim.json";
  std::optional<json> pending = read_json_file(path);
  if (!pending) {
    pending = json{{"key", client::new_idempotency_key()},
                   {"body",
                    {{"worker", worker_},
                     {"kinds", o_.kinds},
                     {"lease_s", o_.lease_s},
                     {"wait_s", o_.wait_s}}}};
    if (Status s = write_json_durably(path, *pending); !s.ok()) {
      client::Response r;
      r.failure = s.ToString();
      return r;
    }
  }
  // A stop (SIGTERM, SIGINT, SIGTSTP) ends a claim that waits for work at
  // once rather than after up to --wait-s: the connection is closed, and the
  // server gives what comes next to another claim. The claim file stays: a
  // job given to this claim just before it closed is had again, with its
  // first reply, by the next runner on this folder.
  if (o_.wait_s > 0 && !claim_stopper_) claim_stopper_ = std::make_unique<ClaimStopper>(c_.get());
  if (claim_stopper_) claim_stopper_->waiting(true);
  client::Response r =
      c_->send("POST", "/v1/jobs/claim", (*pending)["body"], pending->value("key", ""));
  const int64_t replied_unix_ns = unix_ns();
  if (claim_stopper_) claim_stopper_->waiting(false);
  if (r.status == 0 || r.status >= 500) return r;  // sent again, same key, same body
  if (r.status == 200) {
    // The claim file stays until the attempt's journal is durable
    // (prepare_folder): the lease is never forgotten, and no fsync stands
    // between the claim and `start`.
    claimed_unix_ns_ = replied_unix_ns;
    return r;
  }
  // A claim file back after a crash is only sent again, and answered with
  // its first reply: its removal need not wait for the disk.
  remove_file(path);
  return r;
}

int Runner::run() {
  const int code = claim_and_run();
  if (spare_keeper_) spare_keeper_->finish();
  return code;
}

int Runner::claim_and_run() {
  if (int code = preflight(); code != kExitSucceeded) return code;
  struct sigaction stop {};
  stop.sa_handler = on_stop_signal;
  ::sigaction(SIGTERM, &stop, nullptr);
  ::sigaction(SIGINT, &stop, nullptr);
  struct sigaction tstp {};
  tstp.sa_handler = on_tstp;
  ::sigaction(SIGTSTP, &tstp, nullptr);
  struct sigaction usr1 {};
  usr1.sa_handler = on_usr1;
  ::sigaction(SIGUSR1, &usr1, nullptr);
  for (;;) {
    if (g_status_wanted.exchange(false)) print_status();
    if (!settle()) {
      runner_line(o_, "an earlier attempt is not settled yet");
      if (o_.once) return kExitTryLater;
      if (g_stop_signals.load() > 0) return kExitSucceeded;
      std::this_thread::sleep_for(std::chrono::seconds(1));
      continue;
    }
    if (g_stop_signals.load() > 0 || g_no_more_claims.load()) return kExitSucceeded;
    if (!spare_keeper_ || !spare_keeper_->alive()) {
      spare_keeper_.reset();
      // Not there, the attempt starts its keeper itself.
      (void)Keeper::spawn_spare(state_dir_, o_.keeper_detached, o_.grace, &spare_keeper_);
    }
    client::Response claimed = claim();
    // Stopped while the claim waited (claim()): a clean stop, nothing claimed.
    if (claimed.status == 0 && (g_stop_signals.load() > 0 || g_no_more_claims.load())) {
      return kExitSucceeded;
    }
    if (claimed.status == 204) {
      if (o_.once) return kExitSucceeded;
      continue;
    }
    if (claimed.status == 0 || claimed.status >= 500) {
      runner_line(o_, fmt::format("claim: {}", claimed.message()));
      if (o_.once) return kExitUnreachable;
      std::this_thread::sleep_for(std::chrono::seconds(1));
      continue;
    }
    if (claimed.status != 200) {
      runner_line(o_, fmt::format("claim refused: {}", claimed.message()));
      return kExitConfig;
    }
    const AttemptEnd end = run_attempt(claimed.json);
    // Not ended as planned: settle() looks at it again before the next
    // claim, so an attempt left RUNNING or STALE is never forgotten.
    if (end == AttemptEnd::kError) keep_journal_ = true;
    end_attempt();
    if (o_.summary_json) {
      std::printf("%s\n", json{{"job", job_id_},
                               {"attempt", attempt_},
                               {"state", job_.value("state", "")},
                               {"steps", summary_steps_},
                               {"claimed_unix_ns", claimed_unix_ns_}}
                              .dump()
                              .c_str());
      std::fflush(stdout);
    }
    if (!keep_journal_) job_id_.clear();
    if (unexecutable_in_a_row_ >= kUnexecutableInARowMax) {
      runner_line(o_, fmt::format("{} commands in a row could not be executed: no more claims",
                                  unexecutable_in_a_row_));
      return kExitConfig;
    }
    if (!o_.once) {
      if (end == AttemptEnd::kError) std::this_thread::sleep_for(std::chrono::seconds(1));
      continue;
    }
    // A step's end not reported yet: the next runner on this folder reports it.
    if (keep_journal_) return kExitTryLater;
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

namespace {

// The slots' pids, for the supervisor's signal handler.
constexpr int kSlotsMax = 64;
pid_t g_slots[kSlotsMax] = {};
std::atomic<int> g_slot_count{0};

void forward_to_slots(int signal) {
  for (int i = 0; i < g_slot_count.load(); ++i) {
    if (g_slots[i] > 0) ::kill(g_slots[i], signal);
  }
}

// --concurrency N: N runner processes, slot i on <state>/slot-<i>, under a
// supervisor that holds the state folder's lock, passes its signals on and
// exits with the first slot's code that is not 0 (0 when all are).
int run_slots(const WorkOptions& o) {
  const char* from_env = std::getenv("STATE_DIRECTORY");
  const std::string root = !o.state_dir.empty()  ? o.state_dir
                           : from_env != nullptr ? from_env
                                                 : ".runledger-work";
  if (Status p = make_private(root); !p.ok()) {
    runner_line(o, fmt::format("preflight: {}", p.message()));
    return kExitConfig;
  }
  const int lock = ::open((root + "/lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock < 0 || ::flock(lock, LOCK_EX | LOCK_NB) != 0) {
    runner_line(o, fmt::format("the state folder {} is in use by another runner", root));
    return kExitConfig;
  }
  struct sigaction forward {};
  forward.sa_handler = forward_to_slots;
  for (int sig : {SIGTERM, SIGINT, SIGTSTP, SIGUSR1}) ::sigaction(sig, &forward, nullptr);
  for (int i = 1; i <= o.concurrency; ++i) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(lock);
      for (int sig : {SIGTERM, SIGINT, SIGTSTP, SIGUSR1}) ::signal(sig, SIG_DFL);
      WorkOptions slot = o;
      slot.concurrency = 1;
      slot.slot = i;
      slot.state_dir = root + "/slot-" + std::to_string(i);
      if (!o.worker.empty()) slot.worker = o.worker + "/slot-" + std::to_string(i);
      Runner runner(slot);
      std::fflush(nullptr);
      ::_exit(runner.run());
    }
    g_slots[i - 1] = pid;
    g_slot_count = i;
  }
  int result = kExitSucceeded;
  for (int i = 0; i < o.concurrency; ++i) {
    int st = 0;
    while (::waitpid(g_slots[i], &st, 0) < 0 && errno == EINTR) {
    }
    const int code = WIFEXITED(st) ? WEXITSTATUS(st) : kExitInternal;
    if (result == kExitSucceeded) result = code;
  }
  return result;
}

}  // namespace

void inject_relaunch_fault() { g_relaunch_fault = true; }

int run_worker(const WorkOptions& options) {
  if (options.concurrency > 1) return run_slots(options);
  Runner runner(options);
  return runner.run();
}

}  // namespace runledger::worker

#include "worker/keeper.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "worker/spawn.h"
#include "worker/step_process.h"

namespace runledger::worker {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

// How often an idle keeper looks whether its runner is still there.
constexpr std::chrono::milliseconds kKeeperIdleWait{200};

int64_t unix_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Closes every descriptor above stderr but `keep`: the keeper must not hold
// the state folder's lock (a runner started again could never take it) nor
// the runner's sockets.
void close_inherited(int keep, int keep_too) {
  DIR* d = ::opendir("/proc/self/fd");
  std::vector<int> fds;
  if (d != nullptr) {
    while (dirent* e = ::readdir(d)) {
      const int fd = std::atoi(e->d_name);
      if (fd > 2 && fd != keep && fd != keep_too && fd != ::dirfd(d)) fds.push_back(fd);
    }
    ::closedir(d);
  }
  for (int fd : fds) ::close(fd);
}

// The signals a keeper waits for (sigtimedwait), blocked from its start on.
sigset_t keeper_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGUSR1, SIGUSR2, SIGTERM, SIGHUP, SIGCHLD, SIGINT}) sigaddset(&set, sig);
  return set;
}

class KeeperLoop {
 public:
  // `dir` empty: a spare, told its folder on `folder_fd` before its first
  // request.
  KeeperLoop(std::string dir, bool detached, std::chrono::milliseconds grace, int notify_fd,
             int folder_fd, pid_t runner)
      : dir_(std::move(dir)),
        detached_(detached),
        grace_(grace),
        notify_fd_(notify_fd),
        folder_fd_(folder_fd),
        runner_(runner) {}

  [[noreturn]] void run() {
    // What a step leaves running when its own process ends becomes the
    // keeper's child rather than init's: step_left_processes() then tells
    // at once whether there is anything to look for.
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    const sigset_t set = keeper_signals();
    for (;;) {
      timespec wait{0, (child_ ? 20 : kKeeperIdleWait.count()) * 1'000'000L};
      siginfo_t info;
      const int sig = ::sigtimedwait(&set, &info, &wait);
      if (child_) {
        child_->poll_exit();
        if (child_->exited()) finish_step(false);
      }
      const bool runner_gone = ::getppid() != runner_;
      if (sig == SIGUSR1 && !child_) start_requested();
      if (sig == SIGUSR2 && child_) stop_step(false);
      if (sig == SIGTERM || sig == SIGINT) {
        if (child_) stop_step(false);
        ::_exit(0);
      }
      if (runner_gone && !detached_) {
        // Bound: a step must not outlive its runner.
        if (child_) stop_step(true);
        ::_exit(0);
      }
      if (runner_gone && !child_) ::_exit(0);  // detached, and nothing left to watch
    }
  }

 private:
  void start_requested() {
    if (dir_.empty() && !read_folder()) return;
    const std::optional<json> req = read_json_file(dir_ + "/request.json");
    if (!req) return;
    step_ = req->value("step", "");
    // Started before (a request seen twice): never a second time.
    if (step_.empty() || ::access(step_file(dir_, step_, ".pid").c_str(), F_OK) == 0) return;
    const std::vector<std::string> argv = req->value("argv", std::vector<std::string>{});
    const std::vector<std::string> env = req->value("env", std::vector<std::string>{});
    began_ = Clock::now();
    stopped_ = false;
    Status s = StepProcess::start_to_files(argv, env, step_file(dir_, step_, ".stdout"),
                                           step_file(dir_, step_, ".stderr"), &child_);
    exec_unix_ns_ = unix_ns();  // the vfork returns once the child has exec'd
    if (!s.ok()) {
      StepRecord r;
      r.exit_code = 126;
      write_record(r);
      return;
    }
    (void)write_json_whole(step_file(dir_, step_, ".pid"),
                           {{"pid", child_->pid()}, {"start", start_ticks(child_->pid())}});
  }

  // A spare's folder, which Keeper::assign wrote whole (a line shorter than
  // PIPE_BUF) before the request that follows it.
  bool read_folder() {
    std::string line;
    char buf[512];
    while (line.empty() || line.back() != '\n') {
      const ssize_t n = ::read(folder_fd_, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      line.append(buf, static_cast<size_t>(n));
    }
    line.pop_back();
    dir_ = line;
    return !dir_.empty();
  }

  void stop_step(bool runner_died) {
    stopped_ = true;
    runner_died_ = runner_died;
    child_->stop(grace_, [](int, std::string_view) {});
    finish_step(runner_died);
  }

  void finish_step(bool runner_died) {
    StepRecord r;
    r.exec_unix_ns = exec_unix_ns_;
    r.exited_unix_ns = unix_ns();
    r.exit_code = child_->exit_code();
    r.signal = child_->killed_by();
    r.stopped = stopped_ || child_->signalled_by_runner();
    r.runner_died = runner_died;
    r.orphans_killed = step_left_processes() ? stop_session(child_->pid(), grace_) : 0;
    r.duration_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - began_).count();
    child_.reset();
    write_record(r);
  }

  // Once the step's own process is reaped: whether any process it started
  // still runs. As their subreaper the keeper has them all for children,
  // whatever session they moved to; those that ended already are reaped.
  static bool step_left_processes() {
    for (;;) {
      const pid_t p = ::waitpid(-1, nullptr, WNOHANG);
      if (p > 0) continue;
      if (p < 0 && errno == EINTR) continue;
      return p == 0;  // 0: some still run; -1 (ECHILD): none
    }
  }

  void write_record(const StepRecord& r) {
    (void)write_json_durably(step_file(dir_, step_, ".exit"), r.to_json());
    if (notify_fd_ >= 0) {
      const char byte = 1;
      if (::write(notify_fd_, &byte, 1) < 0) {
        ::close(notify_fd_);  // the runner is gone: it reads the record when it comes back
        notify_fd_ = -1;
      }
    }
  }

  std::string dir_;
  const bool detached_;
  const std::chrono::milliseconds grace_;
  int notify_fd_;
  const int folder_fd_;
  const pid_t runner_;
  std::unique_ptr<StepProcess> child_;
  std::string step_;
  Clock::time_point began_{};
  int64_t exec_unix_ns_ = 0;
  bool stopped_ = false;
  bool runner_died_ = false;
};

}  // namespace

json StepRecord::to_json() const {
  return {{"exit_code", exit_code ? json(*exit_code) : json(nullptr)},
          {"signal", signal},
          {"stopped", stopped},
          {"runner_died", runner_died},
          {"duration_ms", duration_ms},
          {"orphans_killed", orphans_killed},
          {"exec_unix_ns", exec_unix_ns},
          {"exited_unix_ns", exited_unix_ns}};
}

StepRecord StepRecord::from_json(const json& j) {
  StepRecord r;
  if (!j.is_object()) return r;
  if (j.contains("exit_code") && j["exit_code"].is_number_integer()) {
    r.exit_code = j["exit_code"].get<int>();
  }
  r.signal = j.value("signal", 0);
  r.stopped = j.value("stopped", false);
  r.runner_died = j.value("runner_died", false);
  r.duration_ms = j.value("duration_ms", int64_t{0});
  r.orphans_killed = j.value("orphans_killed", 0);
  r.exec_unix_ns = j.value("exec_unix_ns", int64_t{0});
  r.exited_unix_ns = j.value("exited_unix_ns", int64_t{0});
  return r;
}

std::string step_file(const std::string& dir, const std::string& step, const char* suffix) {
  return dir + "/step-" + step + suffix;
}

// The keeper program beside this one (build/bin/), else where the package
// installs it (/usr/lib/runledger/ for /usr/bin/runledger); "" when there
// is none.
const std::string& keeper_program() {
  static const std::string path = [] {
    std::error_code ec;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) return std::string();
    for (const std::filesystem::path& p :
         {self.parent_path() / kKeeperProgram,
          self.parent_path() / ".." / "lib" / "runledger" / kKeeperProgram}) {
      if (::access(p.c_str(), X_OK) == 0) return p.string();
    }
    return std::string();
  }();
  return path;
}

[[noreturn]] void run_keeper_process(const KeeperSetup& s) {
  // The runner blocked the keeper's signals before it started this process:
  // none is lost before the loop waits for them.
  ::setsid();  // a terminal's Ctrl-C to the runner's group is the runner's to handle
  if (!s.detached) {
    ::prctl(PR_SET_PDEATHSIG, SIGHUP);
    if (::getppid() != s.runner) ::_exit(0);  // its runner died before it could tell
  }
  for (int sig : {SIGUSR1, SIGUSR2, SIGTERM, SIGHUP, SIGINT, SIGTSTP, SIGQUIT}) {
    ::signal(sig, SIG_DFL);
  }
  ::signal(SIGPIPE, SIG_IGN);
  close_inherited(s.notify_fd, s.folder_fd);
  const int null = ::open("/dev/null", O_RDWR);
  ::dup2(null, STDIN_FILENO);
  ::dup2(null, STDOUT_FILENO);
  if (null > 2) ::close(null);
  KeeperLoop(s.dir, s.detached, s.grace, s.notify_fd, s.folder_fd, s.runner).run();
}

Status Keeper::spawn(const std::string& dir, bool detached, std::chrono::milliseconds grace,
                     std::unique_ptr<Keeper>* out) {
  return start(dir, dir, detached, grace, out);
}

Status Keeper::spawn_spare(const std::string& state_dir, bool detached,
                           std::chrono::milliseconds grace, std::unique_ptr<Keeper>* out) {
  return start("", state_dir, detached, grace, out);
}

Status Keeper::start(const std::string& dir, const std::string& label, bool detached,
                     std::chrono::milliseconds grace, std::unique_ptr<Keeper>* out) {
  int notify[2];
  if (::pipe2(notify, O_CLOEXEC) != 0) {
    return Status::IoError("pipe: " + std::string(std::strerror(errno)));
  }
  int folder[2] = {-1, -1};  // a spare's folder, from the runner
  if (dir.empty() && ::pipe2(folder, O_CLOEXEC) != 0) {
    ::close(notify[0]);
    ::close(notify[1]);
    return Status::IoError("pipe: " + std::string(std::strerror(errno)));
  }
  KeeperSetup setup{dir, detached, grace, notify[1], folder[0], ::getpid()};
  const std::string& program = keeper_program();
  if (program.empty()) {
    ::close(notify[0]);
    ::close(notify[1]);
    if (folder[0] >= 0) ::close(folder[0]);
    if (folder[1] >= 0) ::close(folder[1]);
    return Status::IoError(std::string("the keeper program ") + kKeeperProgram +
                           " is neither beside this program nor in ../lib/runledger/");
  }
  SpawnSpec spec;
  spec.argv = {program,
               "--runner",
               std::to_string(setup.runner),
               "--notify-fd",
               std::to_string(setup.notify_fd),
               "--folder-fd",
               std::to_string(setup.folder_fd),
               "--grace-ms",
               std::to_string(grace.count()),
               "--keeper",
               detached ? "detached" : "bound",
               dir.empty() ? "--spare-for" : "--folder",
               label};
  spec.keep_fds = {setup.notify_fd};
  if (setup.folder_fd >= 0) spec.keep_fds.push_back(setup.folder_fd);
  // Blocked from its first instruction on, so that no request is lost
  // before it waits for them.
  spec.blocked = keeper_signals();
  const pid_t pid = spawn_program(spec);
  const int fork_error = errno;
  ::close(notify[1]);
  if (folder[0] >= 0) ::close(folder[0]);
  if (pid < 0) {
    ::close(notify[0]);
    if (folder[1] >= 0) ::close(folder[1]);
    return Status::IoError("cannot start the keeper: " + std::string(std::strerror(fork_error)));
  }
  std::unique_ptr<Keeper> k(new Keeper());
  k->dir_ = dir;
  k->id_ = ProcessId::of(pid);
  k->child_ = true;
  k->notify_fd_ = notify[0];
  k->folder_fd_ = folder[1];
  *out = std::move(k);
  return Status::Ok();
}

std::unique_ptr<Keeper> Keeper::adopt(const std::string& dir, const ProcessId& id) {
  std::unique_ptr<Keeper> k(new Keeper());
  k->dir_ = dir;
  k->id_ = id;
  return k;
}

Status Keeper::assign(const std::string& dir) {
  if (folder_fd_ < 0 || !dir_.empty()) return Status::Invalid("not a spare keeper");
  const std::string line = dir + "\n";
  if (line.size() > PIPE_BUF) return Status::Invalid("folder name too long: " + dir);
  if (::write(folder_fd_, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    return Status::IoError("the keeper is gone");
  }
  ::close(folder_fd_);
  folder_fd_ = -1;
  dir_ = dir;
  return Status::Ok();
}

Keeper::~Keeper() {
  if (notify_fd_ >= 0) ::close(notify_fd_);
  if (folder_fd_ >= 0) ::close(folder_fd_);
  if (child_ && !reaped_) {
    int st = 0;
    ::waitpid(id_.pid, &st, WNOHANG);
  }
}

Status Keeper::run(const std::string& step, const std::vector<std::string>& argv,
                   const std::vector<std::string>& env) {
  if (Status s = write_request(dir_, step, argv, env); !s.ok()) return s;
  return signal_request();
}

Status Keeper::write_request(const std::string& dir, const std::string& step,
                             const std::vector<std::string>& argv,
                             const std::vector<std::string>& env) {
  return write_json_whole(dir + "/request.json", {{"step", step}, {"argv", argv}, {"env", env}});
}

Status Keeper::signal_request() {
  if (::kill(id_.pid, SIGUSR1) != 0) return Status::IoError("the keeper is gone");
  return Status::Ok();
}

void Keeper::stop_step() {
  if (alive()) ::kill(id_.pid, SIGUSR2);
}

std::optional<StepRecord> Keeper::record(const std::string& step) const {
  std::optional<json> j = read_json_file(step_file(dir_, step, ".exit"));
  if (!j) return std::nullopt;
  return StepRecord::from_json(*j);
}

bool Keeper::alive() {
  if (child_) {
    if (reaped_) return false;
    int st = 0;
    if (::waitpid(id_.pid, &st, WNOHANG) == id_.pid) {
      reaped_ = true;
      return false;
    }
    return true;
  }
  return id_.alive();
}

void Keeper::wait_notice(std::chrono::milliseconds wait) {
  if (notify_fd_ < 0) {
    std::this_thread::sleep_for(std::min(wait, std::chrono::milliseconds(20)));
    return;
  }
  pollfd p{notify_fd_, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(wait.count())) > 0) {
    char buf[64];
    if (::read(notify_fd_, buf, sizeof buf) <= 0) {
      ::close(notify_fd_);  // the keeper is gone
      notify_fd_ = -1;
    }
  }
}

void Keeper::finish() {
  if (!alive()) return;
  ::kill(id_.pid, SIGTERM);
  if (!child_) return;
  int st = 0;
  ::waitpid(id_.pid, &st, 0);
  reaped_ = true;
}

int stop_session(pid_t sid, std::chrono::milliseconds grace) {
  std::vector<pid_t> left = session_members(sid);
  if (left.empty()) return 0;
  for (pid_t p : left) ::kill(p, SIGTERM);
  const auto deadline = Clock::now() + grace;
  while (!session_members(sid).empty() && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (pid_t p : session_members(sid)) ::kill(p, SIGKILL);
  return static_cast<int>(left.size());
}

}  // namespace runledger::worker

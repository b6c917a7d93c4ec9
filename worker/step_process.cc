#include "worker/step_process.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "worker/spawn.h"

namespace runledger::worker {
namespace {

constexpr size_t kReadChunk = 64 * 1024;
// A line longer than this is passed on in pieces: memory stays bounded
// whatever the child writes.
constexpr size_t kLineBytesMax = 64 * 1024;

}  // namespace

pid_t StepProcess::spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                         int out_fd, int err_fd, bool die_with_parent) {
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd < 0) return -1;
  SpawnSpec spec;
  spec.argv = argv;
  spec.env = &env;
  spec.stdin_fd = null_fd;
  spec.stdout_fd = out_fd;
  spec.stderr_fd = err_fd;
  // A session of its own, so that the whole step can be stopped.
  spec.new_session = true;
  spec.die_with_parent = die_with_parent;
  const pid_t pid = spawn_program(spec);
  ::close(null_fd);
  return pid;
}

Status StepProcess::start(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                          std::unique_ptr<StepProcess>* out) {
  if (argv.empty()) return Status::Invalid("no command");
  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0)
    return Status::IoError("pipe: " + std::string(strerror(errno)));
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return Status::IoError("pipe: " + std::string(strerror(errno)));
  }
  const pid_t pid = spawn(argv, env, out_pipe[1], err_pipe[1], /*die_with_parent=*/false);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (pid < 0) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    return Status::IoError("fork: " + std::string(strerror(errno)));
  }
  std::unique_ptr<StepProcess> p(new StepProcess());
  p->pid_ = pid;
  p->fds_[0] = out_pipe[0];
  p->fds_[1] = err_pipe[0];
  *out = std::move(p);
  return Status::Ok();
}

Status StepProcess::start_to_files(const std::vector<std::string>& argv,
                                   const std::vector<std::string>& env, const std::string& out_path,
                                   const std::string& err_path, std::unique_ptr<StepProcess>* out) {
  if (argv.empty()) return Status::Invalid("no command");
  const int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC;
  const int out_fd = ::open(out_path.c_str(), flags, 0600);
  const int err_fd = ::open(err_path.c_str(), flags, 0600);
  if (out_fd < 0 || err_fd < 0) {
    if (out_fd >= 0) ::close(out_fd);
    if (err_fd >= 0) ::close(err_fd);
    return Status::IoError("cannot open the step's output files in " + out_path);
  }
  const pid_t pid = spawn(argv, env, out_fd, err_fd, /*die_with_parent=*/true);
  ::close(out_fd);
  ::close(err_fd);
  if (pid < 0) return Status::IoError("fork: " + std::string(strerror(errno)));
  std::unique_ptr<StepProcess> p(new StepProcess());
  p->pid_ = pid;
  *out = std::move(p);
  return Status::Ok();
}

StepProcess::~StepProcess() {
  for (int& fd : fds_) {
    if (fd >= 0) ::close(fd);
  }
  if (!status_ && pid_ > 0) {
    ::kill(-pid_, SIGKILL);
    reap(true);
  }
}

void StepProcess::reap(bool wait) {
  if (status_ || pid_ <= 0) return;
  int st = 0;
  pid_t r = ::waitpid(pid_, &st, wait ? 0 : WNOHANG);
  if (r == pid_) status_ = st;
}

bool StepProcess::pump(std::chrono::milliseconds wait, const LineSink& on_line) {
  pollfd p[2];
  int n = 0;
  int which[2];
  for (int i = 0; i < 2; ++i) {
    if (fds_[i] < 0) continue;
    p[n] = {fds_[i], POLLIN, 0};
    which[n++] = i;
  }
  if (n > 0) {
    int ready = ::poll(p, static_cast<nfds_t>(n), static_cast<int>(wait.count()));
    for (int k = 0; ready > 0 && k < n; ++k) {
      if ((p[k].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const int i = which[k];
      char buf[kReadChunk];
      ssize_t got = ::read(fds_[i], buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        if (!partial_[i].empty()) on_line(i + 1, partial_[i]);
        partial_[i].clear();
        ::close(fds_[i]);
        fds_[i] = -1;
        continue;
      }
      partial_[i].append(buf, static_cast<size_t>(got));
      size_t start = 0;
      for (size_t nl; (nl = partial_[i].find('\n', start)) != std::string::npos; start = nl + 1) {
        on_line(i + 1, std::string_view(partial_[i]).substr(start, nl - start));
      }
      partial_[i].erase(0, start);
      if (partial_[i].size() > kLineBytesMax) {
        on_line(i + 1, partial_[i]);
        partial_[i].clear();
      }
    }
    reap(false);
    return status_.has_value();
  }
  // Both streams ended: the child is exiting, or runs on without them. It
  // is looked at every millisecond, so that its end is reported at once.
  const auto until = std::chrono::steady_clock::now() + wait;
  for (reap(false); !status_ && std::chrono::steady_clock::now() < until; reap(false)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return status_.has_value();
}

void StepProcess::finish_output(std::chrono::milliseconds wait, const LineSink& on_line) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while ((fds_[0] >= 0 || fds_[1] >= 0) && std::chrono::steady_clock::now() < deadline) {
    pump(std::chrono::milliseconds(20), on_line);
  }
  for (int i = 0; i < 2; ++i) {
    if (!partial_[i].empty()) on_line(i + 1, partial_[i]);
    partial_[i].clear();
  }
}

void StepProcess::signal_session(int signal) {
  if (pid_ <= 0) return;
  signalled_ = true;
  ::kill(-pid_, signal);
}

void StepProcess::stop(std::chrono::milliseconds grace, const LineSink& on_line) {
  signal_session(SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (!status_ && std::chrono::steady_clock::now() < deadline) {
    pump(std::chrono::milliseconds(50), on_line);
  }
  if (!status_) signal_session(SIGKILL);
  reap(true);
}

std::vector<pid_t> session_members(pid_t sid) {
  std::vector<pid_t> members;
  if (sid <= 0) return members;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return members;
  while (dirent* d = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(d->d_name, &end, 10);
    if (*end != '\0' || pid <= 0) continue;
    std::ifstream stat("/proc/" + std::string(d->d_name) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const size_t close = text.rfind(')');
    if (close == std::string::npos) continue;
    // After ") ": state ppid pgrp session.
    std::istringstream rest(text.substr(close + 2));
    std::string state;
    long ppid = 0, pgrp = 0, session = 0;
    rest >> state >> ppid >> pgrp >> session;
    if (session == sid && state != "Z") members.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(proc);
  return members;
}

std::vector<pid_t> StepProcess::session_members() const {
  std::vector<pid_t> members = worker::session_members(pid_);
  std::erase(members, pid_);
  return members;
}

int StepProcess::stop_orphans(std::chrono::milliseconds grace) {
  std::vector<pid_t> left = session_members();
  if (left.empty()) return 0;
  for (pid_t p : left) ::kill(p, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (!session_members().empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (pid_t p : session_members()) ::kill(p, SIGKILL);
  return static_cast<int>(left.size());
}

std::optional<int> StepProcess::exit_code() const {
  if (!status_ || !WIFEXITED(*status_)) return std::nullopt;
  return WEXITSTATUS(*status_);
}

int StepProcess::killed_by() const {
  return status_ && WIFSIGNALED(*status_) ? WTERMSIG(*status_) : 0;
}

}  // namespace runledger::worker

// StepProcess: one step's command as a child process in a session of its own
// (docs/worker.md "What a step's command gets"): stdin /dev/null, stdout
// and stderr read by the runner line by line, the whole session stopped
// (TERM, grace, KILL) when the step is interrupted, and what the step left
// running in its session when it exits stopped and counted.
// Not thread-safe: the runner's one thread drives it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace runledger::worker {

class StepProcess {
 public:
  // Starts argv (argv[0] looked up in PATH) with exactly `env`.
  static Status start(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                      std::unique_ptr<StepProcess>* out);
  // As start(), but stdout and stderr are appended to these files (they
  // outlive the runner, whose pipes would not), and the child is killed
  // when the process that started it dies: a step never outlives its keeper.
  static Status start_to_files(const std::vector<std::string>& argv,
                               const std::vector<std::string>& env, const std::string& out_path,
                               const std::string& err_path, std::unique_ptr<StepProcess>* out);
  ~StepProcess();
  StepProcess(const StepProcess&) = delete;
  StepProcess& operator=(const StepProcess&) = delete;

  // Reads what the child wrote for up to `wait`, calling on_line(stream,
  // line) for each complete line (stream 1 or 2; a last line without its
  // newline comes once the stream closes). True once the child has exited.
  using LineSink = std::function<void(int stream, std::string_view line)>;
  bool pump(std::chrono::milliseconds wait, const LineSink& on_line);
  // After the exit (and stop_orphans): the rest of the output, until both
  // streams end or `wait` passes (a grandchild that escaped the session
  // may hold them open).
  void finish_output(std::chrono::milliseconds wait, const LineSink& on_line);

  // Sends `signal` to every process of the step's session.
  void signal_session(int signal);
  // TERM to the session, up to `grace` for the child to exit, then KILL;
  // pumps its output meanwhile. Returns once the child is reaped.
  void stop(std::chrono::milliseconds grace, const LineSink& on_line);
  // After the child exited: stops what it left in its session (TERM, grace,
  // KILL) and returns how many processes that was.
  int stop_orphans(std::chrono::milliseconds grace);

  pid_t pid() const { return pid_; }
  // Reaps the child if it has exited, without waiting.
  void poll_exit() { reap(false); }
  bool exited() const { return status_.has_value(); }
  // When exited: the exit code, or the signal that killed it.
  std::optional<int> exit_code() const;
  int killed_by() const;
  // Whether the runner itself sent a signal to the session.
  bool signalled_by_runner() const { return signalled_; }

 private:
  StepProcess() = default;
  // fds: the child's stdout and stderr; `die_with_parent`: PR_SET_PDEATHSIG.
  static pid_t spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                     int out_fd, int err_fd, bool die_with_parent);
  void reap(bool wait);
  // The pids of the processes in the session but the child.
  std::vector<pid_t> session_members() const;

  pid_t pid_ = -1;
  int fds_[2] = {-1, -1};  // stdout, stderr (read ends)
  std::string partial_[2];
  std::optional<int> status_;  // waitpid status
  bool signalled_ = false;
};

// The processes of session `sid` (a step's session: its pid), zombies aside.
std::vector<pid_t> session_members(pid_t sid);

}  // namespace runledger::worker

// The keeper of one attempt (docs/worker.md "The runner dies, the host
// reboots"): a small program (runledger-keeper) the runner starts before
// `start` (as a spare, while its claim waits, and tells it its folder once
// it has an attempt), which runs
// each step's command, waits for it and writes its end to the attempt's
// folder (fsynced) before it does anything else. The attempt's
// execution_handle names it (journal.h ProcessId).
//
// - bound: when the runner dies, the keeper stops the step (TERM, grace,
//   KILL), records that it did, and exits.
// - detached: the step runs on; once it ends and is recorded, a keeper whose
//   runner is gone exits, and a runner started again reads the record.
// A step is killed when its keeper dies (PR_SET_PDEATHSIG), so no step ever
// runs unwatched; what it left in its session is stopped by whoever finds it.
//
// Files of the attempt's folder, per step S (S is an id: no '/'):
//   request.json      {"step", "argv", "env"}: the step the runner asks for;
//   step-S.pid        {"pid", "start"}: the step's process, written once it runs;
//   step-S.stdout/.stderr  everything the step wrote;
//   step-S.exit       the StepRecord, written once the step and what it left
//                     in its session have ended.
// Signals to the keeper: SIGUSR1 "a request is there", SIGUSR2 "stop the
// step", SIGTERM "stop the step if one runs, and exit". A byte on the notify
// pipe tells the runner that a record was written.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "worker/journal.h"

namespace runledger::worker {

// How a step's process ended, as its keeper saw it.
struct StepRecord {
  std::optional<int> exit_code;  // when it exited
  int signal = 0;                // when a signal ended it
  bool stopped = false;          // the keeper sent the signals (asked to, or its runner died)
  bool runner_died = false;      // a bound keeper stopped it because its runner died
  int64_t duration_ms = 0;
  int orphans_killed = 0;
  // The wall clock, for benchmarks: when its exec took place (the keeper's
  // vfork returned) and when the keeper saw it end.
  int64_t exec_unix_ns = 0;
  int64_t exited_unix_ns = 0;

  nlohmann::json to_json() const;
  static StepRecord from_json(const nlohmann::json& j);
  // The exit code a reattach reports: the code, or 128 + the signal.
  int code_for_reattach() const { return exit_code ? *exit_code : 128 + signal; }
};

std::string step_file(const std::string& dir, const std::string& step, const char* suffix);

class Keeper {
 public:
  // Starts the keeper of the attempt folder `dir`: the keeper program
  // (kKeeperProgram), installed beside this one. Call from the runner's only
  // thread (a parent-death signal follows the thread that started it).
  static Status spawn(const std::string& dir, bool detached, std::chrono::milliseconds grace,
                      std::unique_ptr<Keeper>* out);
  // A spare keeper of the state folder `state_dir`, started before there is
  // an attempt (while the runner's claim waits), so that a claim's step is
  // not kept waiting for it; assign() gives it its attempt's folder.
  static Status spawn_spare(const std::string& state_dir, bool detached,
                            std::chrono::milliseconds grace, std::unique_ptr<Keeper>* out);
  // A spare's attempt folder, before its first run().
  Status assign(const std::string& dir);
  // A keeper an earlier runner left (no notify pipe; its records are polled).
  static std::unique_ptr<Keeper> adopt(const std::string& dir, const ProcessId& id);
  ~Keeper();
  Keeper(const Keeper&) = delete;
  Keeper& operator=(const Keeper&) = delete;

  const ProcessId& id() const { return id_; }
  // Asks for `step` to be run with `argv` and exactly `env`:
  // write_request() into its folder, then signal_request().
  Status run(const std::string& step, const std::vector<std::string>& argv,
             const std::vector<std::string>& env);
  // The request of `step` in the attempt folder `dir`, not yet acted on: a
  // keeper reads it only when signalled. Safe off the runner's thread.
  static Status write_request(const std::string& dir, const std::string& step,
                              const std::vector<std::string>& argv,
                              const std::vector<std::string>& env);
  // Tells the keeper that its folder's request is there.
  Status signal_request();
  // Asks for the running step to be stopped (TERM, grace, KILL).
  void stop_step();
  // The step's record, once written.
  std::optional<StepRecord> record(const std::string& step) const;
  // Whether the keeper still runs.
  bool alive();
  // Waits up to `wait` for a record to be written (or the keeper to die).
  void wait_notice(std::chrono::milliseconds wait);
  // No more steps: the keeper exits (stopping a step that still runs).
  void finish();

 private:
  Keeper() = default;
  // `label`: the folder named on the keeper program's command line.
  static Status start(const std::string& dir, const std::string& label, bool detached,
                      std::chrono::milliseconds grace, std::unique_ptr<Keeper>* out);
  std::string dir_;
  ProcessId id_;
  bool child_ = false;  // forked by this runner: reaped by it
  bool reaped_ = false;
  int notify_fd_ = -1;
  int folder_fd_ = -1;  // a spare's: where assign() writes its folder
};

// The keeper program, built beside `runledger` and installed in
// /usr/lib/runledger/: a keeper of its own image, which shares no memory
// with its runner (tools/keeper_main.cc).
inline constexpr char kKeeperProgram[] = "runledger-keeper";
// Its path: beside this program, else in ../lib/runledger/; "" when it is
// in neither.
const std::string& keeper_program();

// What a keeper process is told when it starts.
struct KeeperSetup {
  std::string dir;  // empty: a spare, told its folder on folder_fd
  bool detached = false;
  std::chrono::milliseconds grace{0};
  int notify_fd = -1;  // a byte written here: a record was written
  int folder_fd = -1;  // a spare's: the attempt's folder comes on it
  pid_t runner = 0;
};
// Becomes the keeper: the keeper program's main, started with the keeper's
// signals blocked. Never returns.
[[noreturn]] void run_keeper_process(const KeeperSetup& setup);

// TERM to each, up to `grace` for them to go, KILL to the rest; how many there were.
int stop_session(pid_t sid, std::chrono::milliseconds grace);

}  // namespace runledger::worker

// The runner of `runledger work` (docs/worker.md): claims jobs of its kinds,
// runs each pending step's command as a child process, heartbeats the
// lease, maps each step's end to the worker protocol and the attempt's end
// to its exit code.
#pragma once

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "client/client.h"

namespace runledger::worker {

// Exit codes (docs/worker.md "Exit codes").
inline constexpr int kExitSucceeded = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitCancelled = 3;
inline constexpr int kExitStale = 4;
inline constexpr int kExitUsage = 64;
inline constexpr int kExitUnreachable = 69;
inline constexpr int kExitInternal = 70;
inline constexpr int kExitTryLater = 75;
inline constexpr int kExitConfig = 78;

struct WorkOptions {
  client::ClientOptions client;
  std::vector<std::string> kinds;
  std::string worker;  // empty: <hostname>/<pid>
  bool once = false;
  int lease_s = 30;
  int wait_s = 20;
  std::string state_dir;  // empty: $STATE_DIRECTORY, else .runledger-work
  bool cancel_interrupt = false;
  std::chrono::milliseconds grace{10'000};
  std::chrono::milliseconds drain{20'000};
  std::chrono::milliseconds step_timeout{0};  // 0: none
  std::chrono::milliseconds fence_after{0};   // 0: 10 leases, at least 60 s
  std::set<int> retryable_exits{75};
  size_t tail_bytes = 3000;
  // The folders of attempts that are over kept in the state folder, the
  // newest ones; older ones are removed as each attempt ends.
  int keep_attempts = 100;
  bool summary_json = false;
  bool keeper_detached = false;      // --keeper detached: a step outlives its runner's death
  bool log_json = false;             // --log-format json
  int concurrency = 1;               // slots, each a runner process with a state folder of its own
  int slot = 1;                      // which slot this runner is (SIGUSR1 names it)
  std::vector<std::string> command;  // after --, run per step
  std::map<std::string, std::string> step_commands;  // --step NAME=CMD
};

// Fault injection for the exclusivity tests only, called by the test build
// tests/support/runledger_relaunching.cc and nothing else (no flag or
// variable of `runledger` reaches it): from then on, a runner started again
// does not settle a step whose detached keeper still runs, but reattaches
// and runs the step again, as a naive wrapper would; the tests' probe must
// catch the overlap it causes.
void inject_relaunch_fault();

// Runs until the work is over (one attempt with `once`, else until SIGTERM
// or SIGINT and a drain); the exit code.
int run_worker(const WorkOptions& options);

}  // namespace runledger::worker

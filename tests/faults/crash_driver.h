// CrashDriver: the kill -9 test of docs/performance.md "Reliability". Job workers
// (W1) and connector clients drive a real runledgerd from several threads;
// at a moment drawn from a seeded generator the server is SIGKILLed (now and
// then already while it starts and replays), then restarted on the same
// data folder. After each restart, with the clients paused, it checks
// (crash_checks.h), on the events written since the check before the last:
//  - the log is gapless and still holds, unchanged, what it held before;
//  - every command is whole: its events all there or none (by command_id);
//  - every acknowledged command is in the log at the version its reply named;
//  - each entity a client saw acknowledged since the last check is served at
//    that state or, when the client had a command in flight, a later one;
//  - an unanswered command sent again under its Idempotency-Key gets its
//    first reply when it was applied, and is applied once when it was not.
// Every `full_check_every` cycles, and after the last, it also checks the
// whole log and every entity: `runledger verify` is clean and `runledger
// replay --compare` finds no difference, both run against the live server's
// folder, and every entity a client ever saw acknowledged is served as above.
// The seed fixes the kill moments and every client's choices; thread
// timing still varies, so a seed reproduces the schedule, not each
// interleaving.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/faults/crash_checks.h"
#include "tests/faults/crash_clients.h"
#include "tests/http/api_client.h"
#include "tests/support/server_process.h"
#include "tests/support/test_support.h"

namespace runledger::testing {

struct CrashOptions {
  uint64_t seed = 1;
  int cycles = 3;
  int job_workers = 4;
  int connector_clients = 2;
  // The load before each kill is drawn from this window.
  std::chrono::milliseconds load_min{150};
  std::chrono::milliseconds load_max{1500};
  // Cycles whose server is first killed while it starts (replaying the log),
  // and how long after its start that kill comes at most.
  int kill_at_start_percent = 10;
  std::chrono::milliseconds kill_at_start_max{300};
  // Cycles between the checks of the whole log (see above); the last cycle
  // always has one.
  int full_check_every = 1;
};

struct CrashReport {
  uint64_t seed = 0;
  int cycles = 0;
  int kills = 0;           // SIGKILLs, those at start-up included
  int kills_at_start = 0;  // of those, while the server started
  ClientStats commands;    // summed over the clients
  uint64_t events = 0;     // in the log at the end
  Problems problems;       // empty when every check held
  std::string summary() const;
};

class CrashDriver {
 public:
  // Problems kept beyond this are counted, not stored: one broken
  // invariant usually shows in many places.
  static constexpr size_t kProblemsMax = 40;
  // A command writes at most this many events (a retryable step failure).
  static constexpr uint64_t kEventsPerCommandMax = 3;

  explicit CrashDriver(CrashOptions options);
  // Runs every cycle (or until problems pile up) and stops the server.
  CrashReport run();

 private:
  bool start_server();
  void load_then_kill();
  void check_after_restart(int cycle);
  void check_new_acks(ApiClient& api, const LogWindow& log, size_t client, Problems* problems);
  void check_served_views(ApiClient& api, CrashClient& client, bool all, Problems* problems);
  void check_with_tools(Problems* problems);
  void add_problems(int cycle, const Problems& found);

  CrashOptions options_;
  std::mt19937_64 rng_;
  TempDir data_;
  std::unique_ptr<ServerProcess> server_;
  std::vector<std::unique_ptr<CrashClient>> clients_;
  LogHistory seen_;                   // the log as served after the previous restart
  uint64_t window_after_ = 0;         // the seq the check before the last had seen
  std::vector<size_t> acks_checked_;  // of each client
  CrashReport report_;
  size_t problems_dropped_ = 0;
};

// RUNLEDGER_CRASH_SEED when set, else a fresh random seed.
uint64_t crash_seed_from_env();
// RUNLEDGER_CRASH_CYCLES when set, else `fallback`.
int crash_cycles_from_env(int fallback);
// RUNLEDGER_CRASH_FULL_CHECK_EVERY when set, else `fallback`.
int crash_full_check_every_from_env(int fallback);

}  // namespace runledger::testing

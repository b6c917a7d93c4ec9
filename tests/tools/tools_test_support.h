// Scaffolding for the CLI tests: build logs with the in-process engine on a
// real RocksDB store and damage a stored log under the store's feet; running
// `runledger` and `runledgerd` as real subprocesses comes from
// tests/support (subprocess.h, server_process.h).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <rocksdb/db.h>
#include <nlohmann/json.hpp>

#include "engine/clock.h"
#include "engine/command.h"
#include "engine/engine.h"
#include "tests/support/raw_db.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_support.h"

namespace runledger::testing {

// The CLI's exit codes for errors (sysexits.h) and gate's "no" (docs/cli.md).
inline constexpr int kExitUsage = 64;        // bad arguments
inline constexpr int kExitDataErr = 65;      // input that is not what it should be
inline constexpr int kExitNoInput = 66;      // no data folder or file to read
inline constexpr int kExitUnreachable = 69;  // the server did not answer
inline constexpr int kExitSoftware = 70;     // an internal failure
inline constexpr int kExitCantCreate = 73;   // an output that cannot be made
inline constexpr int kExitGateClosed = 76;   // gate: new work may not start

// The lines of a text.
std::vector<std::string> lines_of(const std::string& text);

// An engine on a real RocksDB store in its own temp folder, on a manual
// clock, without timers: time moves only when the test says so.
class EngineRig {
 public:
  // Every command moves the clock on by this much first, so events of
  // different commands have different times.
  static constexpr int64_t kStepMs = 1000;

  explicit EngineRig(uint64_t snapshot_every_events = EngineOptions{}.snapshot_every_events);
  ~EngineRig();
  EngineRig(const EngineRig&) = delete;
  EngineRig& operator=(const EngineRig&) = delete;

  const std::string& data() const { return dir_.path(); }
  ManualClock& clock() { return clock_; }
  Engine& engine() { return *engine_; }

  // Runs a command as `actor`. The reply's status is the decider's: 200 for
  // an accepted command, the rejection's status otherwise; the body is the
  // error JSON or the decision's body.
  Reply run(Command c, const std::string& actor = "tester");
  // ExpireLeases and RunSchedule at the current time, as the timer would.
  void tick();
  // The engine's state seen through views: stream -> HTTP view, plus "seq".
  std::map<std::string, nlohmann::json> live_views();
  uint64_t last_seq();
  // Id of the first open hold that names `job`, empty when none.
  std::string open_hold_of(const std::string& job);
  // Shuts the engine down (it writes its final snapshot) and closes the store.
  void close();

 private:
  TempDir dir_;
  ManualClock clock_;
  std::shared_ptr<EventStore> store_;
  std::unique_ptr<Engine> engine_;
};

// An enqueue with a two-step plan (A, B) and a kind of its own, so a claim
// for that kind picks exactly this job.
jobs::Enqueue enqueue(const std::string& id, const std::string& target, int max_attempts = 3);
jobs::Claim claim(const std::string& job_kind, const std::string& worker, const std::string& token,
                  int64_t lease_s = 30);

// The mixed workload of the replay, compare and export tests: connectors
// synced, failed, paused, aborted and deleted; jobs succeeded, retried,
// cancelled, gone STALE and resolved through their hold, leased, blocked by a
// job and by a hold, and rerun; operator holds placed and released. Checks
// every command was accepted as planned.
void run_mixed_workload(EngineRig& rig);

// `bytes` (an encoded event) encoded again with another prev_hash.
std::string with_prev_hash(std::string_view bytes, const Hash& prev_hash);
// `bytes` encoded again with a payload type no build knows.
std::string with_unknown_payload_type(std::string_view bytes);

}  // namespace runledger::testing

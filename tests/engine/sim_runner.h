// Simulation: the deterministic simulation of the engine (docs/performance.md,
// Reliability). One seed drives everything: which actor acts (workers,
// operators, connector sync loops), what it sends, how far the clock jumps,
// when a write fails and when the engine restarts. The simulation is also
// the engine's timer: after moving the ManualClock it sends the lease expiry
// and schedule commands the way the timer would, at each due instant (or
// late, after a stall), and checks that nothing due is left behind.
//
// After every command it checks, naming the rule on failure:
//   invariant 1, 2 and the state rules   InvariantChecker on the live State
//   invariant 3  fold(log) == live state: an incremental fold of the stored
//                events must equal memory for every stream the step touched
//                (and the whole state every `digest_check_every` steps; a
//                load of snapshot + tail every `full_check_every` steps; a
//                replay from scratch every `replay_check_every` steps and at
//                the end)
//   invariant 4  the state a reply was rendered from is all in the log
//   invariant 5  a command's events share one command id; a failed write
//                leaves the log as it was and the engine takes writes again
//   invariant 6  a refusal records nothing but an ignored sync report or the
//                cancellation it enforces, and changes none of its streams
//   invariant 7  a repeated idempotency key repeats the first reply, acts on
//                nothing; the key with another request is refused
//   fencing      a worker command with a token that is not the attempt's
//                current lease is never accepted
//   claim        a claim hands out exactly the best ready job: priority, then
//                enqueue order, kind, not_before, target free, not blocked
// plus what the actors check against docs/domain.md's tables.
//
// A failure names the seed and the step; the same seed replays it exactly.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/engine/sim_bus.h"
#include "tests/engine/sim_connectors.h"
#include "tests/engine/sim_host.h"
#include "tests/engine/sim_invariants.h"
#include "tests/engine/sim_log_hash.h"
#include "tests/engine/sim_operator.h"
#include "tests/engine/sim_shadow.h"
#include "tests/engine/sim_worker.h"

namespace runledger::testing {

struct SimOptions {
  uint64_t seed = 1;
  size_t commands = 10'000;        // the run stops once this many were sent
  size_t digest_check_every = 50;  // steps between whole-state comparisons with fold(log)
  size_t full_check_every = 250;   // ... that also load the snapshot + tail
  size_t replay_check_every = 2'500;
};

struct SimReport {
  uint64_t seed = 0;
  size_t steps = 0;
  size_t commands = 0;
  size_t invariant_checks = 0;
  size_t stream_fold_checks = 0;  // streams compared with fold(log) after a command
  size_t full_fold_checks = 0;    // whole-state comparisons with fold(log)
  size_t replays = 0;             // replays of the log from scratch
  size_t restarts = 0;
  size_t write_faults = 0;
  size_t timer_fires = 0;
  uint64_t events = 0;
  LogFingerprint fingerprint;
  std::string failure;  // empty when everything held
  // command name -> reply status (and error code) -> count
  std::map<std::string, std::map<std::string, size_t>> outcomes;
  std::map<std::string, size_t> event_types;  // events recorded, by type

  std::string coverage() const;
};

class Simulation final : public SimBus {
 public:
  explicit Simulation(SimOptions options);
  ~Simulation() override;
  SimReport run();

  Sent send(const Command& c, const std::string& actor) override;
  void fail(const std::string& what) override;
  SimRandom& random() override { return rnd_; }
  SimHost& host() override { return *host_; }

 private:
  struct Before;
  struct Keyed {
    std::string key;
    Command command;
    std::string text;
    Reply reply;
    int64_t at_ms = 0;  // when the first reply was recorded
  };

  void step();
  Before look_before(const Command& c);
  void check_command(const Command& c, const Before& before, const Sent& sent, bool fault,
                     const LogTail& tail);
  void check_after(const std::vector<std::string>& streams);
  void check_full(bool load_snapshot, bool replay);
  void advance_clock(int64_t ms, bool timer_on_time);
  void fire_timer();
  int64_t next_due_ms();
  void restart();
  void repeat_keyed();
  void remember_keyed(const Request& r, const Command& c, const Reply& reply);

  SimOptions options_;
  SimRandom rnd_;
  std::unique_ptr<SimHost> host_;
  ShadowFold shadow_;
  InvariantChecker checker_;
  std::vector<Worker> workers_;
  Operator operator_;
  ConnectorFleet fleet_;
  std::deque<Keyed> keyed_;
  size_t keys_made_ = 0;
  SimReport report_;
  std::string doing_;  // the command or event being simulated, for failures
};

// Runs one seed to the end (or the first failure).
SimReport simulate(const SimOptions& options);

}  // namespace runledger::testing

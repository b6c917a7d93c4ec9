// RandomDriver: sends the engine a random but reproducible sequence of
// commands (from a seed) that exercises every command type: enqueue, claim,
// heartbeat, release, start, steps, failures, cancel, outcome unknown,
// reattach, rerun, connectors (create, update, delete, sync, abort, reports),
// holds (place, release) and ticks with clock jumps. Each command is chosen
// from the current state so most are meaningful, with a share of wrong
// tokens, wrong steps, unknown ids and missing evidence mixed in.
//
// A share of commands carry idempotency keys, and earlier keyed requests are
// sent again (same request: the first reply, no effect; another request:
// 409). With `fault_percent`, that share of commands meets a failed write.
//
// After every command it checks what must hold at every moment
// (docs/domain.md section 4): no 5xx but the 503 of a failed write (which leaves
// nothing in the log), invariant 1 (one LEASED/RUNNING attempt per
// target, holder index exact), invariant 2 (a terminal attempt never
// changes, attempt numbers are 1..n), invariant 6 (a refusal records nothing
// but an ignored sync report or the cancellation it enforces).
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/engine/engine_harness.h"

namespace runledger::testing {

class RandomDriver {
 public:
  RandomDriver(EngineHarness& h, uint64_t seed, int fault_percent = 0);

  // Runs one random command and checks it. Returns an empty string, or what
  // went wrong (with the command).
  std::string step();
  // The last command, described for failure messages.
  const std::string& last_command() const { return last_; }
  size_t commands_run() const { return commands_; }
  // How many commands of each type got each reply, e.g.
  // "job.start 200:12 409/stale_token:3".
  std::string coverage() const;

 private:
  struct World;
  World observe();
  Command choose(const World& w);
  Command job_command(const World& w, int op);
  Command worker_command(const World& w, int op, const std::string& job);
  Command connector_command(const World& w, int op);
  Command hold_command(const World& w, int op);
  Command enqueue();
  // The next step of a random live job on its happy path (claim, start,
  // step start/done, reattach), so jobs run through whole lifecycles.
  Command advance(const World& w);
  std::string repeat_keyed();
  void count(const Command& c, const Reply& r);
  std::string check_reply(const Reply& r, uint64_t seq_before, bool fault);
  std::string check_state();
  void learn(const Command& c, const Reply& r);

  bool chance(int percent) { return static_cast<int>(rng_() % 100) < percent; }
  size_t below(size_t n) { return n == 0 ? 0 : rng_() % n; }
  template <typename T>
  const T& one_of(const std::vector<T>& v) {
    return v[below(v.size())];
  }
  std::string token_for(const std::string& job);
  std::string fresh_token() { return lease_token(std::to_string(rng_())); }

  struct Keyed {
    std::string key;
    Command command;
    std::string text;  // what the fingerprint covers
    Reply reply;       // the first reply
  };

  EngineHarness& h_;
  std::mt19937_64 rng_;
  int fault_percent_;
  std::vector<Keyed> keyed_;
  std::string last_;
  size_t commands_ = 0;
  int next_job_ = 0;
  int next_connector_ = 0;
  int next_hold_ = 0;
  std::vector<std::string> job_ids_;        // every job ever enqueued
  std::vector<std::string> connector_ids_;  // every connector ever created
  // command name -> status (with the error code) -> count
  std::map<std::string, std::map<std::string, int>> outcomes_;
  std::map<std::string, std::string> tokens_;  // job -> the token it was last leased with
  // (job, attempt number) -> the attempt when first seen terminal.
  std::map<std::pair<std::string, int>, nlohmann::json> terminal_;
};

}  // namespace runledger::testing

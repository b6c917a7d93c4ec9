// Worker: one simulated worker process. It claims jobs of its kinds, starts
// them with an execution handle, runs the plan's steps (reporting each done,
// or failed, retryable or not), heartbeats when its lease runs low, and now
// and then misbehaves the ways real workers do: it gives a lease back, skips
// heartbeats for a while (its lease may expire under it; its next command is
// then fenced), reports that it does not know the outcome, or crashes while
// holding a lease and comes back later to reattach (observing the execution
// still running, or exited with a code), since it must never launch twice.
//
// A worker knows only what its replies and its job's view tell it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tests/engine/sim_bus.h"

namespace runledger::testing {

class Worker {
 public:
  Worker(std::string id, std::vector<std::string> kinds);
  // One thing this worker does now (or nothing, while it is down or away).
  void act(SimBus& bus);
  const std::string& id() const { return id_; }

 private:
  enum class Phase : uint8_t { kIdle, kLeased, kRunning, kDown, kAway };
  // What the worker's job looks like now (its view, as a reply shows it).
  struct JobView {
    bool found = false;
    bool ours = false;  // the latest attempt's lease is our token
    std::string state, running_step, first_pending;
    bool cancel_requested = false;
    int64_t lease_expires_at_ms = 0;
  };

  JobView look(SimBus& bus) const;
  void claim(SimBus& bus);
  void leased(SimBus& bus);
  void running(SimBus& bus);
  void work_step(SimBus& bus, const JobView& v);
  void heartbeat(SimBus& bus);
  void crash(SimBus& bus, bool started);
  void come_back(SimBus& bus);
  // After a reply: follow the job's view (finished, fenced, cancelled...).
  void resync(SimBus& bus);
  void drop();

  std::string id_;
  std::vector<std::string> kinds_;
  Phase phase_ = Phase::kIdle;
  Phase before_away_ = Phase::kIdle;
  int steps_left_ = 0;  // while down or away
  std::string job_, token_, handle_;
  int64_t lease_s_ = 0;
  int64_t lease_until_ms_ = 0;  // as the worker believes
  int handles_made_ = 0;
};

}  // namespace runledger::testing

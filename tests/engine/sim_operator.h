// Operator: the people and schedulers around the engine's jobs. It enqueues
// jobs (kinds, targets, plans, priorities, earliest starts), cancels them,
// asks for reruns of finished ones, places holds and releases them with the
// evidence section 3 asks for (and now and then without it). Where
// docs/domain.md says exactly what a command must answer, it checks the answer.
#pragma once

#include <string>
#include <vector>

#include "tests/engine/sim_bus.h"

namespace runledger::testing {

class Operator {
 public:
  // Enqueues a job unless `live_jobs_max` jobs are already live.
  void enqueue(SimBus& bus, size_t live_jobs_max);
  void cancel(SimBus& bus);
  void rerun(SimBus& bus);
  void place_hold(SimBus& bus);
  void release_hold(SimBus& bus);

 private:
  std::vector<std::string> enqueued_;  // ids whose enqueue was accepted
  int next_job_ = 0;
  int next_hold_ = 0;
};

// The simulation's kinds and targets (few, so targets are contended).
const std::vector<std::string>& sim_kinds();
const std::vector<std::string>& sim_targets();

}  // namespace runledger::testing

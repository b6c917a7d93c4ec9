// The correctness check of every workload that runs W1 jobs: with the
// engine closed, the data folder is opened again and must hold exactly
// `jobs` finished jobs of the plan, each SUCCEEDED in the view the store
// keeps for finished entities, and exactly kW1EventsPerJob events per job in
// the log. It also fills the figures of the log: events and disk bytes.
#pragma once

#include <cstdint>
#include <string>

#include "bench/result.h"
#include "bench/w1_engine.h"

namespace runledger::bench {

// JobEnqueued, JobLeased, JobStarted, 4 x (StepStarted, StepSucceeded),
// AttemptSucceeded.
inline constexpr uint64_t kW1EventsPerJob = 12;

// `other_events`: events in the log that are not W1 jobs of this plan.
void check_w1_folder(const std::string& dir, const W1Plan& plan, uint64_t other_events,
                     BenchResult& r);

}  // namespace runledger::bench

// generate_w1_log(): fills an empty data folder with a log of at least
// `events` events of W1 jobs run to SUCCEEDED through the engine (so the log
// holds exactly what a server writes: events, finished views, periodic
// snapshots), for the workloads that measure reading a log back.
#pragma once

#include <cstdint>
#include <string>

#include "bench/engine_rig.h"
#include "bench/result.h"
#include "bench/w1_engine.h"

namespace runledger::bench {

struct GeneratedLog {
  W1Plan plan;
  double seconds = 0;
};

// Runs ceil(events / kW1EventsPerJob) jobs with `callers` threads; failures
// go into r. `before_close` runs with the engine still open (e.g. to
// simulate a crash before its final snapshot).
GeneratedLog generate_w1_log(const std::string& dir, uint64_t events, size_t callers,
                             const ProgressFn& progress, BenchResult& r,
                             const StoreWrapper& wrap = nullptr,
                             const std::function<void()>& before_close = nullptr);

}  // namespace runledger::bench

// Workload w1: W1 on the in-process engine (no HTTP) with many concurrent
// callers, every command durable before its reply (group commit).
#include <fmt/format.h>

#include "bench/bench.h"
#include "bench/commit_figures.h"
#include "bench/data_folder.h"
#include "bench/engine_rig.h"
#include "bench/w1_checks.h"
#include "bench/w1_engine.h"

namespace runledger::bench {

BenchResult run_w1(const BenchOptions& o) {
  BenchResult r;
  r.workload = "w1";
  r.parameters = {{"callers", o.callers},
                  {"chained", o.chained},
                  {"jobs", o.jobs},
                  {"targets", o.targets},
                  {"store", o.pg_dsn.empty() ? "rocksdb" : "postgres"}};
  DataFolder folder(o.data);
  if (!folder.error().empty()) {
    r.error = folder.error();
    finish(r);
    return r;
  }
  W1Plan plan;
  plan.callers = o.callers;
  plan.jobs = o.jobs;
  plan.targets = o.targets;
  plan.chained = o.chained;
  {
    EngineRig rig;
    Status opened =
        o.pg_dsn.empty() ? rig.open(folder.path()) : rig.open_on_postgres(folder.path(), o.pg_dsn);
    if (Status st = opened; !st.ok()) {
      r.error = "opening the engine failed: " + st.ToString();
      finish(r);
      return r;
    }
    CommitFigures before = commit_figures(rig.engine());
    W1Outcome w = drive_w1(rig.engine(), plan, o.progress, "w1");
    CommitFigures done = commit_figures(rig.engine()).since(before);
    r.count = w.commands;
    r.seconds = w.seconds;
    r.latency = w.latency.summary();
    r.fsync_batches = done.fsync_batches;
    r.batch_commands = done.batch_commands;
    r.failures = w.failures;
    if (w.commands > 0) {
      r.figures["cpu_us_per_command"] = w.cpu_seconds * 1e6 / static_cast<double>(w.commands);
    }
    r.checks["commands"] = w.commands;
    r.checks["commands_expected"] = plan.jobs * kW1CommandsPerJob;
    r.expect(
        w.commands == plan.jobs * kW1CommandsPerJob,
        fmt::format("{} commands ran, expected {}", w.commands, plan.jobs * kW1CommandsPerJob));
    finish(r);  // RSS while the engine is still open
  }
  if (r.failures.empty()) check_w1_folder(folder.path(), plan, 0, r);
  finish(r);
  return r;
}

}  // namespace runledger::bench

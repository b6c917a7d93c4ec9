// Workload replay: a generated log of N events is folded from its first
// event into every projection (no snapshot), on a store opened afresh, the
// way `runledger replay` and a start without snapshot rebuild the state.
#include <fmt/format.h>

#include "bench/bench.h"
#include "bench/data_folder.h"
#include "bench/log_generator.h"
#include "bench/machine.h"
#include "bench/w1_checks.h"
#include "engine/state_loader.h"

namespace runledger::bench {
namespace {

void fold(const std::string& dir, const GeneratedLog& g, const ProgressFn& progress,
          BenchResult& r) {
  std::unique_ptr<EventStore> store;
  if (Status st = open_rocksdb_store(dir, StoreOptions{}, &store); !st.ok()) {
    r.error = "opening the store failed: " + st.ToString();
    return;
  }
  uint64_t last_seq = store->last_seq();
  LoadOptions lo;
  lo.use_snapshot = false;
  lo.evict_finished = false;  // kept, so the check can count them
  if (progress) lo.progress = [&](uint64_t n) { progress("replay", n, last_seq); };
  State state;
  LoadReport report;
  Status st = load_state(*store, lo, &state, &report);
  if (!r.expect(st.ok(), "the fold failed: " + st.ToString())) return;
  r.count = report.replayed;
  r.seconds = report.seconds;
  r.events = last_seq;
  uint64_t succeeded = state.jobs.count_by_state["SUCCEEDED"];
  r.checks["events_folded"] = report.replayed;
  r.checks["jobs"] = g.plan.jobs;
  r.checks["jobs_succeeded"] = succeeded;
  r.expect(report.replayed == last_seq && last_seq == g.plan.jobs * kW1EventsPerJob,
           fmt::format("folded {} of {} events, expected {}", report.replayed, last_seq,
                       g.plan.jobs * kW1EventsPerJob));
  r.expect(succeeded == g.plan.jobs,
           fmt::format("{} of {} jobs folded to SUCCEEDED", succeeded, g.plan.jobs));
  r.rss_bytes = current_rss_bytes();  // with the whole history in memory
}

}  // namespace

BenchResult run_replay(const BenchOptions& o) {
  BenchResult r;
  r.workload = "replay";
  r.unit = "events";
  r.parameters = {{"events", o.events}, {"callers", o.callers}};
  DataFolder folder(o.data);
  if (!folder.error().empty()) {
    r.error = folder.error();
    finish(r);
    return r;
  }
  GeneratedLog g = generate_w1_log(folder.path(), o.events, o.callers, o.progress, r);
  r.figures["generate_seconds"] = g.seconds;
  if (r.ok()) fold(folder.path(), g, o.progress, r);
  r.disk_bytes = folder_bytes(folder.path());
  finish(r);
  return r;
}

}  // namespace runledger::bench

// Workload replay: a generated log of N events is folded from its first
// event into every projection (no snapshot), on a store opened afresh, the
// way a start without snapshot rebuilds the state (finished jobs leave
// memory as the fold goes) or, with keep_finished, `runledger replay` (all
// of them stay).
#include <fmt/format.h>

#include "bench/bench.h"
#include "bench/data_folder.h"
#include "bench/log_generator.h"
#include "bench/machine.h"
#include "bench/w1_checks.h"
#include "engine/state_loader.h"

namespace runledger::bench {
namespace {

void fold(const std::string& dir, const GeneratedLog& g, const BenchOptions& o, BenchResult& r) {
  std::unique_ptr<EventStore> store;
  if (Status st = open_rocksdb_store(dir, StoreOptions{}, &store); !st.ok()) {
    r.error = "opening the store failed: " + st.ToString();
    return;
  }
  uint64_t last_seq = store->last_seq();
  LoadOptions lo;
  lo.use_snapshot = false;
  lo.evict_finished = !o.keep_finished;
  // Jobs leave the counts by state as they leave memory: count them as they go.
  uint64_t succeeded = 0;
  lo.before_eviction = [&](const State& s) {
    auto it = s.jobs.count_by_state.find("SUCCEEDED");
    if (it != s.jobs.count_by_state.end()) succeeded += it->second;
  };
  if (o.progress) lo.progress = [&](uint64_t n) { o.progress("replay", n, last_seq); };
  State state;
  LoadReport report;
  Status st = load_state(*store, lo, &state, &report);
  if (!r.expect(st.ok(), "the fold failed: " + st.ToString())) return;
  r.count = report.replayed;
  r.seconds = report.seconds;
  r.events = last_seq;
  if (o.keep_finished) succeeded = state.jobs.count_by_state["SUCCEEDED"];
  r.checks["jobs_in_memory"] = state.jobs.by_id.size();
  r.checks["events_folded"] = report.replayed;
  r.checks["jobs"] = g.plan.jobs;
  r.checks["jobs_succeeded"] = succeeded;
  r.expect(report.replayed == last_seq && last_seq == g.plan.jobs * kW1EventsPerJob,
           fmt::format("folded {} of {} events, expected {}", report.replayed, last_seq,
                       g.plan.jobs * kW1EventsPerJob));
  r.expect(succeeded == g.plan.jobs,
           fmt::format("{} of {} jobs folded to SUCCEEDED", succeeded, g.plan.jobs));
  // Every W1 job finished: with keep_finished all of them are in memory,
  // otherwise none.
  const uint64_t expected_in_memory = o.keep_finished ? g.plan.jobs : 0;
  r.expect(state.jobs.by_id.size() == expected_in_memory,
           fmt::format("{} jobs in memory after the fold, expected {}", state.jobs.by_id.size(),
                       expected_in_memory));
  r.rss_bytes = current_rss_bytes();
}

}  // namespace

BenchResult run_replay(const BenchOptions& o) {
  BenchResult r;
  r.workload = "replay";
  r.unit = "events";
  r.parameters = {{"events", o.events}, {"callers", o.callers}, {"keep_finished", o.keep_finished}};
  DataFolder folder(o.data);
  if (!folder.error().empty()) {
    r.error = folder.error();
    finish(r);
    return r;
  }
  GeneratedLog g = generate_w1_log(folder.path(), o.events, o.callers, o.progress, r);
  r.figures["generate_seconds"] = g.seconds;
  if (r.ok()) fold(folder.path(), g, o, r);
  r.disk_bytes = folder_bytes(folder.path());
  finish(r);
  return r;
}

}  // namespace runledger::bench

// The W1 outcome check: see w1_checks.h.
#include "bench/w1_checks.h"

#include <memory>

#include <nlohmann/json.hpp>

#include "bench/machine.h"
#include "events/event_store.h"
#include "projections/stream_name.h"

namespace runledger::bench {
namespace {

struct ViewCount {
  uint64_t views = 0;
  uint64_t succeeded = 0;
};

Status count_views(const EventStore& store, const W1Plan& plan, ViewCount* out) {
  std::string prefix = job_stream(plan.id_prefix + "-");
  return store.scan_views(prefix, "", [&](std::string_view, std::string_view value) {
    ++out->views;
    auto j = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && j.value("state", std::string()) == "SUCCEEDED") ++out->succeeded;
    return true;
  });
}

}  // namespace

void check_w1_folder(const std::string& dir, const W1Plan& plan, uint64_t other_events,
                     BenchResult& r) {
  {
    std::unique_ptr<EventStore> store;
    Status st = open_rocksdb_store(dir, StoreOptions{}, &store);
    if (!r.expect(st.ok(), "the data folder does not open again: " + st.ToString())) return;
    ViewCount vc;
    st = count_views(*store, plan, &vc);
    r.expect(st.ok(), "reading the finished jobs failed: " + st.ToString());
    r.events = store->last_seq();
    uint64_t expected_events = plan.jobs * kW1EventsPerJob + other_events;
    r.checks["jobs"] = plan.jobs;
    r.checks["jobs_succeeded"] = vc.succeeded;
    r.checks["events_expected"] = expected_events;
    r.expect(vc.succeeded == plan.jobs && vc.views == plan.jobs,
             std::to_string(vc.succeeded) + " of " + std::to_string(plan.jobs) +
                 " jobs are stored SUCCEEDED (" + std::to_string(vc.views) + " finished)");
    r.expect(r.events == expected_events, "the log holds " + std::to_string(r.events) +
                                              " events, expected " +
                                              std::to_string(expected_events));
  }
  // Measured once the store is closed: reopening it flushed the write-ahead
  // log into compressed tables, as a long-running server's folder would be.
  r.disk_bytes = folder_bytes(dir);
}

}  // namespace runledger::bench

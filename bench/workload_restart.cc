// Workload restart: a data folder with N events, left as by a server that
// was killed (the last periodic snapshot, then the tail after it), is opened:
// the store, then the engine (snapshot + tail folded, timers armed), until a
// read through the engine answers. That is the time to ready.
#include <chrono>

#include <fmt/format.h>

#include "bench/bench.h"
#include "bench/crash_store.h"
#include "bench/data_folder.h"
#include "bench/log_generator.h"
#include "bench/machine.h"
#include "bench/w1_checks.h"

namespace runledger::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

double seconds_since(SteadyClock::time_point t) {
  return std::chrono::duration<double>(SteadyClock::now() - t).count();
}

void time_restart(const std::string& dir, const GeneratedLog& g, BenchResult& r) {
  auto start = SteadyClock::now();
  std::unique_ptr<EventStore> rocks;
  if (Status st = open_rocksdb_store(dir, StoreOptions{}, &rocks); !st.ok()) {
    r.error = "opening the store failed: " + st.ToString();
    return;
  }
  double store_s = seconds_since(start);
  std::shared_ptr<EventStore> store = std::move(rocks);
  SystemClock clock;
  std::unique_ptr<Engine> engine;
  if (Status st = Engine::open(store, clock, EngineOptions{}, &engine); !st.ok()) {
    r.error = "opening the engine failed: " + st.ToString();
    return;
  }
  uint64_t served_seq = 0;
  engine->read([&](const State& s, const Decision*) {
    served_seq = s.last_seq;
    return Reply{200, ""};
  });
  r.seconds = seconds_since(start);
  const LoadReport& lr = engine->load_report();
  r.events = store->last_seq();
  r.count = r.events;
  r.rss_bytes = current_rss_bytes();
  r.figures["store_open_seconds"] = store_s;
  r.figures["state_load_seconds"] = lr.seconds;
  r.figures["snapshot_seq"] = lr.snapshot_seq;
  r.figures["tail_events"] = lr.replayed;
  r.checks["served_seq"] = served_seq;
  uint64_t expected = g.plan.jobs * kW1EventsPerJob;
  r.checks["events_expected"] = expected;
  r.expect(served_seq == expected && r.events == expected,
           fmt::format("the engine serves seq {}, the log ends at {}, expected {}", served_seq,
                       r.events, expected));
  r.expect(lr.snapshot_seq + lr.replayed == expected,
           fmt::format("snapshot at {} plus {} tail events do not make {}", lr.snapshot_seq,
                       lr.replayed, expected));
  engine->shutdown();
}

}  // namespace

BenchResult run_restart(const BenchOptions& o) {
  BenchResult r;
  r.workload = "restart";
  r.unit = "events";
  r.latency_of = "";
  r.parameters = {{"events", o.events}, {"callers", o.callers}};
  DataFolder folder(o.data);
  if (!folder.error().empty()) {
    r.error = folder.error();
    finish(r);
    return r;
  }
  CrashStore* crash = nullptr;
  auto wrap = [&crash](std::unique_ptr<EventStore> rocks) {
    auto s = std::make_shared<CrashStore>(std::move(rocks));
    crash = s.get();
    return std::shared_ptr<EventStore>(s);
  };
  GeneratedLog g = generate_w1_log(folder.path(), o.events, o.callers, o.progress, r, wrap,
                                   [&crash] { crash->crash(); });
  r.figures["generate_seconds"] = g.seconds;
  if (r.ok()) time_restart(folder.path(), g, r);
  r.disk_bytes = folder_bytes(folder.path());
  finish(r);
  return r;
}

}  // namespace runledger::bench

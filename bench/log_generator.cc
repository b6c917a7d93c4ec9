// generate_w1_log(): see log_generator.h.
#include "bench/log_generator.h"

#include "bench/w1_checks.h"

namespace runledger::bench {

GeneratedLog generate_w1_log(const std::string& dir, uint64_t events, size_t callers,
                             const ProgressFn& progress, BenchResult& r, const StoreWrapper& wrap,
                             const std::function<void()>& before_close) {
  GeneratedLog g;
  g.plan.callers = callers;
  g.plan.jobs = (events + kW1EventsPerJob - 1) / kW1EventsPerJob;
  g.plan.id_prefix = "gen";
  g.plan.record_latency = false;
  EngineRig rig;
  if (Status st = rig.open(dir, EngineOptions{}, wrap); !st.ok()) {
    r.error = "opening the engine failed: " + st.ToString();
    return g;
  }
  W1Outcome w = drive_w1(rig.engine(), g.plan, progress, "generate");
  g.seconds = w.seconds;
  for (const auto& f : w.failures) r.failures.push_back("generating the log: " + f);
  if (before_close) before_close();
  rig.close();
  return g;
}

}  // namespace runledger::bench

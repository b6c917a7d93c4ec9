// Workload memory: N jobs run to SUCCEEDED (W1), then the resident memory
// of the process with the engine still open, as a server holds it. Finished
// jobs must have left memory and still be readable the way GET /v1/jobs/{id}
// reads them (from the view the store keeps).
#include <fmt/format.h>

#include "base/free_memory.h"
#include "bench/bench.h"
#include "bench/commit_figures.h"
#include "bench/data_folder.h"
#include "bench/engine_rig.h"
#include "bench/machine.h"
#include "bench/w1_checks.h"
#include "bench/w1_engine.h"
#include "http/entity_reads.h"

namespace runledger::bench {
namespace {

std::optional<nlohmann::json> live_job(const State& s, const std::string& id) {
  auto it = s.jobs.by_id.find(id);
  if (it == s.jobs.by_id.end()) return std::nullopt;
  return jobs::view(s, it->second);
}

void check_finished_readable(Engine& e, const W1Plan& plan, BenchResult& r) {
  size_t in_memory = 0;
  e.read([&](const State& s, const Decision*) {
    in_memory = s.jobs.by_id.size();
    return Reply{200, ""};
  });
  r.checks["jobs_in_memory"] = in_memory;
  r.expect(in_memory == 0, fmt::format("{} finished jobs are still in memory", in_memory));
  for (uint64_t n : {uint64_t{0}, plan.jobs / 2, plan.jobs - 1}) {
    std::string id = w1_job_id(plan, n);
    Reply got = http::read_entity(
        e, job_stream(id), [&id](const State& s) { return live_job(s, id); }, "job " + id);
    auto j = nlohmann::json::parse(got.body, nullptr, false);
    bool ok = got.status == 200 && j.is_object() && j.value("state", "") == "SUCCEEDED";
    r.expect(ok, fmt::format("finished job {} reads {} {}", id, got.status, got.body));
  }
  r.checks["finished_jobs_readable"] = r.failures.empty();
}

}  // namespace

BenchResult run_memory(const BenchOptions& o) {
  BenchResult r;
  r.workload = "memory";
  r.parameters = {
      {"finished_jobs", o.finished_jobs}, {"callers", o.callers}, {"chained", o.chained}};
  DataFolder folder(o.data);
  if (!folder.error().empty()) {
    r.error = folder.error();
    finish(r);
    return r;
  }
  W1Plan plan;
  plan.callers = o.callers;
  plan.chained = o.chained;
  plan.jobs = o.finished_jobs;
  plan.id_prefix = "mem";
  plan.record_latency = false;  // its samples would be counted as the engine's memory
  {
    EngineRig rig;
    if (Status st = rig.open(folder.path()); !st.ok()) {
      r.error = "opening the engine failed: " + st.ToString();
      finish(r);
      return r;
    }
    uint64_t rss_before = current_rss_bytes();
    CommitFigures before = commit_figures(rig.engine());
    W1Outcome w = drive_w1(rig.engine(), plan, o.progress, "memory");
    CommitFigures done = commit_figures(rig.engine()).since(before);
    r.count = w.commands;
    r.seconds = w.seconds;
    r.fsync_batches = done.fsync_batches;
    r.batch_commands = done.batch_commands;
    r.failures = w.failures;
    if (r.failures.empty()) check_finished_readable(rig.engine(), plan, r);
    // Where the resident memory is: the store's parts, and the heap's bytes
    // in use and free but kept by the allocator.
    for (const auto& part : rig.store().memory_parts()) {
      r.figures["store_" + part.name + "_bytes"] = part.bytes;
    }
    const HeapFigures heap = heap_figures();
    r.figures["heap_in_use_bytes"] = heap.in_use_bytes;
    r.figures["heap_free_resident_bytes"] = heap.free_resident_bytes;
    r.figures["rss_before_release_bytes"] = current_rss_bytes();
    // What the server holds at rest: its FreeMemoryKeeper gives back, within
    // kFreeMemoryKeeperEvery, what the allocator keeps over kFreeBytesKept.
    // The same pass, without waiting for it.
    return_free_memory_over(kFreeBytesKept);
    r.rss_bytes = current_rss_bytes();
    r.figures["rss_after_open_bytes"] = rss_before;
    r.figures["rss_growth_bytes"] = r.rss_bytes - std::min(r.rss_bytes, rss_before);
  }
  if (r.failures.empty()) check_w1_folder(folder.path(), plan, 0, r);
  finish(r);
  return r;
}

}  // namespace runledger::bench

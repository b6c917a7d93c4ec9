// Workload lease-expiry: N jobs are enqueued and claimed with a short lease
// on the real clock, with the engine's timers on as in runledgerd; nobody
// heartbeats, so every lease runs out. The figure is the delay from each
// lease's due time to the time recorded in its LeaseExpired event.
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "base/sha256.h"
#include "bench/bench.h"
#include "bench/commit_figures.h"
#include "bench/data_folder.h"
#include "bench/engine_rig.h"
#include "bench/machine.h"
#include "bench/progress_wait.h"
#include "bench/w1_engine.h"
#include "projections/snapshot.h"

namespace runledger::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr char kKind[] = "lease-bench";
// How long past the last due time the expiries may take before the run is
// declared broken: generous, a shared machine may be slow.
constexpr int64_t kExpiryGraceS = 120;
constexpr auto kPollInterval = std::chrono::milliseconds(50);

// Runs `make(n)` for n in [0, count) on `callers` threads; each reply must
// be 200 and contain `want`. Returns the failures.
std::vector<std::string> run_all(Engine& e, uint64_t count, size_t callers,
                                 const std::function<Command(uint64_t)>& make,
                                 const std::string& want, const ProgressFn& progress,
                                 std::string_view phase) {
  std::atomic<uint64_t> next{0}, done{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::vector<std::string> failures;
  std::vector<std::thread> threads;
  for (size_t c = 0; c < callers; ++c) {
    threads.emplace_back([&] {
      for (uint64_t n; !stop && (n = next.fetch_add(1)) < count;) {
        Request r;
        r.command = make(n);
        r.render = brief_reply;
        r.actor = "bench";
        Reply reply = e.execute(std::move(r));
        if (reply.status != 200 || reply.body.find(want) == std::string::npos) {
          stop = true;
          std::lock_guard<std::mutex> lk(mu);
          failures.push_back(fmt::format("{} {}: {} {}", phase, n, reply.status, reply.body));
          return;
        }
        done.fetch_add(1);
      }
    });
  }
  wait_with_progress(threads, done, count, stop, progress, phase);
  return failures;
}

// Waits until the engine recorded `count` expiries or the deadline passed.
uint64_t wait_for_expiries(Engine& e, uint64_t count, int64_t deadline_ms,
                           const ProgressFn& progress) {
  SystemClock clock;
  uint64_t expired = 0;
  while ((expired = commit_figures(e).lease_expiries) < count && clock.now_ms() < deadline_ms) {
    if (progress) progress("expire", expired, count);
    std::this_thread::sleep_for(kPollInterval);
  }
  if (progress) progress("expire", expired, count);
  return expired;
}

struct ExpiryScan {
  LatencyRecorder delays;
  uint64_t expired = 0;
  int64_t first_due_ms = 0;
  int64_t last_recorded_ms = 0;
  int64_t last_leased_ms = 0;
};

Status scan_log(const EventStore& store, ExpiryScan* out) {
  return store.read_range(0, 0, [out](const fb::Event& e, std::string_view) {
    if (const auto* le = e.payload_as_LeaseExpired()) {
      ++out->expired;
      int64_t due = le->lease_expires_at_ms();
      out->delays.add(static_cast<double>(e.recorded_at_ms() - due));
      if (out->first_due_ms == 0 || due < out->first_due_ms) out->first_due_ms = due;
      out->last_recorded_ms = std::max(out->last_recorded_ms, e.recorded_at_ms());
    } else if (e.payload_type() == fb::Payload::JobLeased) {
      out->last_leased_ms = std::max(out->last_leased_ms, e.recorded_at_ms());
    }
    return true;
  });
}

// The seq of the last periodic snapshot (0: none), read after the run.
uint64_t last_snapshot_seq(const EventStore& store) {
  std::string bytes;
  uint64_t seq = 0;
  Hash hash;
  if (!store.get_snapshot(&bytes).ok() || !decode_snapshot_head(bytes, &seq, &hash).ok()) return 0;
  return seq;
}

void measure(EngineRig& rig, const BenchOptions& o, BenchResult& r) {
  Engine& e = rig.engine();
  auto id = [](uint64_t n) { return fmt::format("lease-{}", n); };
  r.failures = run_all(
      e, o.leases, o.callers,
      [&](uint64_t n) {
        return Command(jobs::Enqueue{.id = id(n), .kind = kKind, .target = "lease-t" + id(n)});
      },
      "JobEnqueued", o.progress, "enqueue");
  if (!r.failures.empty()) return;
  r.failures = run_all(
      e, o.leases, o.callers,
      [&](uint64_t n) {
        std::string token = sha256_hex(id(n)).substr(0, jobs::kLeaseTokenChars);
        return Command(jobs::Claim{"worker-" + id(n), {kKind}, o.lease_s, token});
      },
      "JobLeased", o.progress, "claim");
  if (!r.failures.empty()) return;
  SystemClock clock;
  int64_t deadline = clock.now_ms() + (o.lease_s + kExpiryGraceS) * 1000;
  uint64_t expired = wait_for_expiries(e, o.leases, deadline, o.progress);
  r.expect(expired == o.leases, fmt::format("{} of {} leases expired", expired, o.leases));
  ExpiryScan scan;
  Status st = scan_log(e.store(), &scan);
  if (!r.expect(st.ok(), "reading the log failed: " + st.ToString())) return;
  r.latency = scan.delays.summary();
  r.count = scan.expired;
  r.seconds = static_cast<double>(scan.last_recorded_ms - scan.first_due_ms) / 1000.0;
  r.figures["all_claimed_before_first_due"] = scan.last_leased_ms <= scan.first_due_ms;
  r.checks["leases"] = o.leases;
  r.checks["lease_expired_events"] = scan.expired;
  size_t queued = 0;
  e.read([&](const State& s, const Decision*) {
    queued = s.jobs.count_by_state.at("QUEUED");
    return Reply{200, ""};
  });
  r.checks["jobs_queued_again"] = queued;
  r.expect(scan.expired == o.leases,
           fmt::format("{} LeaseExpired events in the log, expected {}", scan.expired, o.leases));
  r.expect(queued == o.leases, fmt::format("{} of {} jobs are QUEUED again", queued, o.leases));
}

}  // namespace

BenchResult run_lease_expiry(const BenchOptions& o) {
  BenchResult r;
  r.workload = "lease-expiry";
  r.unit = "leases";
  r.latency_of = "due -> LeaseExpired recorded";
  r.parameters = {{"leases", o.leases},
                  {"lease_s", o.lease_s},
                  {"callers", o.callers},
                  {"snapshot_every_events", o.snapshot_every_events}};
  DataFolder folder(o.data);
  if (!folder.error().empty()) {
    r.error = folder.error();
    finish(r);
    return r;
  }
  {
    EngineRig rig;
    EngineOptions eo;
    if (o.snapshot_every_events > 0) {
      eo.snapshot_every_events = o.snapshot_every_events;
      eo.snapshot_events_per_live_entity = 0;
    }
    if (Status st = rig.open(folder.path(), eo); !st.ok()) {
      r.error = "opening the engine failed: " + st.ToString();
      finish(r);
      return r;
    }
    CommitFigures before = commit_figures(rig.engine());
    measure(rig, o, r);
    CommitFigures done = commit_figures(rig.engine()).since(before);
    r.fsync_batches = done.fsync_batches;
    r.batch_commands = done.batch_commands;
    r.events = done.last_seq;
    r.figures["snapshot_seq"] = last_snapshot_seq(rig.engine().store());
    finish(r);
  }
  r.disk_bytes = folder_bytes(folder.path());
  return r;
}

}  // namespace runledger::bench

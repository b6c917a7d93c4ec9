// runledger bench: the benchmarks of docs/performance.md, one sub-subcommand per
// workload (bench/bench.h). Prints a table, or with --json one JSON object;
// shows a progress line on a terminal. Exits 1 when the workload's own
// check failed (the figures of a broken run are worthless), 69 when the
// server to drive cannot be reached, 70 when the run could not happen.
#include <cstdio>
#include <memory>
#include <string>

#include "bench/bench.h"
#include "tools/cli_commands.h"

namespace runledger::cli {
namespace {

using bench::BenchOptions;
using bench::BenchResult;
using WorkloadFn = BenchResult (*)(const BenchOptions&);

struct BenchFlags {
  BenchOptions options;
  bool json = false;
};

// One progress line per phase, redrawn in place on a terminal.
class PhaseProgress {
 public:
  void operator()(std::string_view phase, uint64_t done, uint64_t total) {
    if (phase != phase_ || !line_) {
      line_.reset();
      phase_ = std::string(phase);
      line_ = std::make_unique<Progress>("bench " + phase_, total);
    }
    line_->update(done);
  }

 private:
  std::string phase_;
  std::unique_ptr<Progress> line_;
};

int run(WorkloadFn fn, BenchFlags& f) {
  auto progress = std::make_shared<PhaseProgress>();
  f.options.progress = [progress](std::string_view phase, uint64_t done, uint64_t total) {
    (*progress)(phase, done, total);
  };
  BenchResult r = fn(f.options);
  f.options.progress = nullptr;
  progress.reset();  // clears the progress line before the result is printed
  std::string text = f.json ? bench::to_json(r).dump() + "\n" : bench::to_table(r);
  std::fputs(text.c_str(), stdout);
  if (!r.error.empty()) return r.server_unreachable ? kExitUnavailable : kExitSoftware;
  return r.ok() ? kExitOk : kExitFindings;
}

struct Workload {
  CLI::App* app = nullptr;
  WorkloadFn fn = nullptr;
  std::shared_ptr<BenchFlags> flags;
};

Workload add_workload(CLI::App& bench, const std::string& name, const std::string& about,
                      WorkloadFn fn) {
  Workload w{bench.add_subcommand(name, about), fn, std::make_shared<BenchFlags>()};
  w.app->add_flag("--json", w.flags->json, "print the result as one JSON object");
  return w;
}

void add_data(const Workload& w) {
  w.app->add_option("--data", w.flags->options.data,
                    "empty folder to keep the store in (default: a temporary folder, removed)");
}

void add_callers(const Workload& w) {
  w.app->add_option("--callers", w.flags->options.callers, "concurrent threads driving the engine")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
}

void add_chained(const Workload& w) {
  w.app->add_flag("--chained", w.flags->options.chained,
                  "run each caller as a chain of completions (Engine::submit) instead of a "
                  "thread that waits for every reply: many callers in flight on few threads");
}

// The size of a W1 run.
void add_jobs_and_targets(const Workload& w) {
  w.app->add_option("--jobs", w.flags->options.jobs, "jobs to run")
      ->check(CLI::Range(1, 100'000'000))
      ->capture_default_str();
  w.app->add_option("--targets", w.flags->options.targets, "distinct targets")
      ->check(CLI::Range(1, 10'000'000))
      ->capture_default_str();
}

// The size of a generated log.
void add_events(const Workload& w) {
  w.app->add_option("--events", w.flags->options.events, "events to generate")
      ->check(CLI::Range(1, 1'000'000'000))
      ->capture_default_str();
}

Workload add_w1(CLI::App& bench) {
  Workload w = add_workload(
      bench, "w1",
      "W1 on the in-process engine (no HTTP): each caller runs whole jobs (enqueue, claim, start, "
      "4 x step start + done: 11 durable commands) on targets of its own",
      bench::run_w1);
  add_callers(w);
  add_chained(w);
  add_jobs_and_targets(w);
  add_data(w);
  w.app->add_option("--pg-dsn", w.flags->options.pg_dsn,
                    "keep the log in this PostgreSQL database, whose log must be empty, the engine "
                    "leading it as a cluster node (docs/cluster.md)");
  return w;
}

Workload add_w1_http(CLI::App& bench) {
  Workload w = add_workload(
      bench, "w1-http",
      "W1 over HTTP with keep-alive clients, against an in-process server on a free loopback "
      "port (temporary data folder) or, with --server, a running runledgerd",
      bench::run_w1_http);
  BenchOptions& o = w.flags->options;
  w.app->add_option("--clients", o.clients, "concurrent keep-alive clients")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  w.app
      ->add_option("--client-threads", o.client_threads,
                   "threads the clients' connections are spread over (as pgbench -j)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  add_jobs_and_targets(w);
  auto* server = w.app->add_option("--server", o.server,
                                   "URL of a running runledgerd to drive (http://HOST:PORT)");
  w.app
      ->add_option("--data", o.data,
                   "empty folder for the in-process server's store (default: temporary)")
      ->excludes(server);
  return w;
}

Workload add_follow(CLI::App& bench) {
  Workload w = add_workload(
      bench, "follow",
      "Generate a log of at least N events (W1 jobs through the engine), copy it into an empty "
      "PostgreSQL database as a leader appends it, then time a node with an empty folder from "
      "its start until it has folded the whole log (docs/cluster.md)",
      bench::run_follow);
  add_events(w);
  add_callers(w);
  add_data(w);
  w.app->add_option("--pg-dsn", w.flags->options.pg_dsn, "an empty PostgreSQL database")
      ->required();
  return w;
}

Workload add_replay_bench(CLI::App& bench) {
  Workload w = add_workload(
      bench, "replay",
      "Generate a log of at least N events (W1 jobs through the engine), then time a full fold "
      "of every projection from the first event (no snapshot), dropping finished jobs from "
      "memory as it goes, as a start without a snapshot does",
      bench::run_replay);
  add_events(w);
  add_callers(w);
  add_data(w);
  w.app->add_flag("--keep-finished", w.flags->options.keep_finished,
                  "keep every finished job in memory to the end, as `runledger replay` does");
  return w;
}

Workload add_restart(CLI::App& bench) {
  Workload w = add_workload(
      bench, "restart",
      "Generate a log of at least N events as a server that crashed would leave it (the last "
      "periodic snapshot plus the tail after it), then time opening the store and the engine "
      "until it is ready to serve",
      bench::run_restart);
  add_events(w);
  add_callers(w);
  add_data(w);
  return w;
}

Workload add_lease_expiry(CLI::App& bench) {
  Workload w = add_workload(
      bench, "lease-expiry",
      "Enqueue and claim N jobs with short leases on the real clock, then measure the delay from "
      "each lease's due time to its recorded LeaseExpired",
      bench::run_lease_expiry);
  BenchOptions& o = w.flags->options;
  w.app->add_option("--leases", o.leases, "open leases")
      ->check(CLI::Range(1, 10'000'000))
      ->capture_default_str();
  w.app
      ->add_option("--lease-s", o.lease_s,
                   "lease length (s); all leases should be claimed "
                   "before the first one is due")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  w.app
      ->add_option("--snapshot-every-events", o.snapshot_every_events,
                   "write a projection snapshot every N events, however many jobs are live "
                   "(default: the engine's own interval, which grows with them)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{100'000'000}));
  add_callers(w);
  add_data(w);
  return w;
}

Workload add_memory(CLI::App& bench) {
  Workload w = add_workload(
      bench, "memory",
      "Run N jobs to SUCCEEDED, then report resident memory and check that finished jobs left "
      "memory and are still readable",
      bench::run_memory);
  w.app->add_option("--finished-jobs", w.flags->options.finished_jobs, "jobs to finish")
      ->check(CLI::Range(1, 100'000'000))
      ->capture_default_str();
  add_callers(w);
  add_chained(w);
  add_data(w);
  return w;
}

}  // namespace

Subcommand add_bench_work(CLI::App& bench);  // tools/cli_bench_work.cc

Subcommand add_bench(CLI::App& root) {
  CLI::App* app = root.add_subcommand(
      "bench",
      "The benchmarks of docs/performance.md. Each workload checks its own outcome and exits 1 "
      "when it is "
      "wrong; figures are printed as a table, or with --json as one JSON object.");
  app->require_subcommand(1);
  auto workloads = std::make_shared<std::vector<Workload>>(std::vector<Workload>{
      add_w1(*app), add_w1_http(*app), add_replay_bench(*app), add_restart(*app),
      add_lease_expiry(*app), add_memory(*app), add_follow(*app)});
  Subcommand work = add_bench_work(*app);
  return {app, [workloads, work] {
            if (work.app->parsed()) return work.run();
            for (auto& w : *workloads) {
              if (w.app->parsed()) return run(w.fn, *w.flags);
            }
            return kExitUsage;
          }};
}

}  // namespace runledger::cli

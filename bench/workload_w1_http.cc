// Workload w1-http: W1 over HTTP with keep-alive clients, against an
// in-process server (engine + HTTP facade, as runledgerd runs them) on a free
// loopback port, or against a running runledgerd given by --server.
#include <random>
#include <thread>

#include <fmt/format.h>

#include "bench/bench.h"
#include "bench/commit_figures.h"
#include "bench/data_folder.h"
#include "bench/engine_rig.h"
#include "bench/machine.h"
#include "bench/w1_checks.h"
#include "bench/w1_http.h"
#include "http/server.h"

namespace runledger::bench {
namespace {

constexpr char kLoopback[] = "127.0.0.1";

// The server's counters over GET /metrics; false when it does not answer.
bool server_figures(const std::string& url, CommitFigures* out, std::string* error) {
  int status = 0;
  std::string body;
  if (!http_get(url, "/metrics", &status, &body, error)) return false;
  if (status != 200) {
    *error = fmt::format("GET /metrics answered {}", status);
    return false;
  }
  *out = parse_commit_figures(body);
  return true;
}

// Drives `url`, filling the throughput, latency and group-commit figures.
void drive(const std::string& url, const W1Plan& plan, const BenchOptions& o, BenchResult& r) {
  CommitFigures before, after;
  std::string error;
  if (!server_figures(url, &before, &error)) {
    r.error = "the server at " + url + " does not answer: " + error;
    r.server_unreachable = true;
    return;
  }
  W1Outcome w = drive_w1_http(url, plan, o.client_threads, o.progress, "w1-http");
  if (!server_figures(url, &after, &error)) {
    r.failures.push_back("the server stopped answering: " + error);
    return;
  }
  CommitFigures done = after.since(before);
  r.count = w.commands;
  r.seconds = w.seconds;
  r.latency = w.latency.summary();
  r.fsync_batches = done.fsync_batches;
  r.batch_commands = done.batch_commands;
  r.failures = w.failures;
  r.checks["jobs_succeeded_seen_by_clients"] = w.jobs_succeeded;
  r.checks["commands"] = w.commands;
  r.expect(w.jobs_succeeded == plan.jobs,
           fmt::format("the clients saw {} of {} jobs succeed", w.jobs_succeeded, plan.jobs));
  r.expect(w.commands == plan.jobs * kW1CommandsPerJob,
           fmt::format("{} commands ran, expected {}", w.commands, plan.jobs * kW1CommandsPerJob));
  r.figures["events_appended"] = done.events_appended;
}

void run_in_process(const BenchOptions& o, const W1Plan& plan, BenchResult& r) {
  DataFolder folder(o.data);
  if (!folder.error().empty()) {
    r.error = folder.error();
    return;
  }
  {
    EngineRig rig;
    if (Status st = rig.open(folder.path()); !st.ok()) {
      r.error = "opening the engine failed: " + st.ToString();
      return;
    }
    http::ServerOptions so;
    so.host = kLoopback;
    so.port = 0;  // a free port
    http::Server server(rig.engine(), so);
    if (Status st = server.bind(); !st.ok()) {
      r.error = "the in-process server cannot listen: " + st.ToString();
      return;
    }
    std::thread serving([&server] { server.serve(); });
    std::string url = fmt::format("http://{}:{}", kLoopback, server.port());
    r.figures["server"] = "in-process on " + url;
    drive(url, plan, o, r);
    finish(r);
    server.stop();
    serving.join();
  }
  if (r.ok()) check_w1_folder(folder.path(), plan, 0, r);
}

// Job ids no earlier run on the same server used.
std::string fresh_prefix() {
  std::random_device rd;
  return fmt::format("w1h-{:08x}", rd());
}

}  // namespace

BenchResult run_w1_http(const BenchOptions& o) {
  BenchResult r;
  r.workload = "w1-http";
  r.parameters = {{"clients", o.clients},
                  {"client_threads", o.client_threads},
                  {"jobs", o.jobs},
                  {"targets", o.targets}};
  W1Plan plan;
  plan.callers = o.clients;
  plan.jobs = o.jobs;
  plan.targets = o.targets;
  if (o.server.empty()) {
    plan.id_prefix = "w1h";
    run_in_process(o, plan, r);
  } else {
    plan.id_prefix = fresh_prefix();
    r.figures["server"] = o.server;
    drive(o.server, plan, o, r);
    // Another client of the same server may add events; ours must all be there.
    if (r.error.empty()) {
      r.expect(r.figures.value("events_appended", uint64_t{0}) >= plan.jobs * kW1EventsPerJob,
               "the server appended fewer events than the jobs need");
    }
  }
  finish(r);
  return r;
}

}  // namespace runledger::bench

// The benchmarks of docs/performance.md ("Speed and scale"), one workload per file:
//   w1            W1 on the in-process engine, many concurrent callers
//   w1-http       W1 over HTTP with keep-alive clients (in-process or external server)
//   replay        fold a generated log of N events from scratch (events/s)
//   restart       open the engine on a folder of N events (snapshot + tail)
//   lease-expiry  N open leases: delay from due to the recorded LeaseExpired
//   memory        N jobs run to SUCCEEDED: resident memory, finished jobs readable
// Each checks its own outcome (see BenchResult). `runledger bench` runs them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/result.h"

namespace runledger::bench {

// Called from the thread that runs the workload, a few times a second.
using ProgressFn = std::function<void(std::string_view phase, uint64_t done, uint64_t total)>;

inline constexpr size_t kDefaultCallers = 64;
inline constexpr size_t kDefaultClients = 32;
inline constexpr size_t kDefaultClientThreads = 2;
inline constexpr uint64_t kDefaultJobs = 20'000;
inline constexpr size_t kDefaultTargets = 10'000;
inline constexpr uint64_t kDefaultEvents = 1'000'000;
inline constexpr uint64_t kDefaultLeases = 10'000;
inline constexpr int64_t kDefaultLeaseS = 5;
inline constexpr uint64_t kDefaultFinishedJobs = 200'000;

struct BenchOptions {
  size_t callers = kDefaultCallers;  // in-process threads (or chains, with `chained`)
  bool chained = false;              // w1: callers are chains of completions, not threads
  size_t clients = kDefaultClients;  // HTTP keep-alive clients
  size_t client_threads = kDefaultClientThreads;  // w1-http: threads the clients share
  uint64_t jobs = kDefaultJobs;
  size_t targets = kDefaultTargets;
  uint64_t events = kDefaultEvents;
  uint64_t leases = kDefaultLeases;
  int64_t lease_s = kDefaultLeaseS;
  uint64_t finished_jobs = kDefaultFinishedJobs;
  // lease-expiry: a projection snapshot every N events however many entities
  // are live (0: the engine's own rule, EngineOptions).
  uint64_t snapshot_every_events = 0;
  // replay: keep every finished entity in memory to the end, as
  // `runledger replay` does to print them, instead of dropping them as the
  // fold goes, as a start without a snapshot does.
  bool keep_finished = false;
  std::string data;    // empty: a temporary folder, removed at the end
  std::string server;  // w1-http: drive this server instead of an in-process one
  // w1: the log in this PostgreSQL database (an empty one), the engine
  // leading it as a node of a cluster does (docs/cluster.md).
  std::string pg_dsn;
  ProgressFn progress;
};

BenchResult run_w1(const BenchOptions& o);
BenchResult run_w1_http(const BenchOptions& o);
BenchResult run_replay(const BenchOptions& o);
BenchResult run_restart(const BenchOptions& o);
BenchResult run_lease_expiry(const BenchOptions& o);
BenchResult run_memory(const BenchOptions& o);
BenchResult run_follow(const BenchOptions& o);

}  // namespace runledger::bench

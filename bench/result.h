// BenchResult: what one workload measured and whether its run was correct,
// printed as a table for people and as one JSON object for scripts.
//
// `error` is a run that could not happen (a store that did not open, a
// server that did not answer); `failures` is a run whose outcome was wrong
// (a job that did not succeed, an event count off). Either makes the figures
// worthless, and the CLI exits non-zero.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/latency.h"

namespace runledger::bench {

struct BenchResult {
  std::string workload;
  nlohmann::ordered_json parameters = nlohmann::ordered_json::object();
  // The throughput: `count` of `unit` ("commands", "events", "leases") in `seconds`.
  std::string unit = "commands";
  uint64_t count = 0;
  double seconds = 0;
  // What `latency` measures, e.g. "command reply" or "lease expiry delay".
  std::string latency_of = "command reply";
  LatencySummary latency;
  // Group commit, from the engine's metrics over the measured run.
  uint64_t fsync_batches = 0;
  uint64_t batch_commands = 0;
  // The log and the data folder at the end of the run (0: unknown).
  uint64_t events = 0;
  uint64_t disk_bytes = 0;
  uint64_t rss_bytes = 0;
  uint64_t peak_rss_bytes = 0;
  // The workload's own correctness figures and its other measurements.
  nlohmann::ordered_json checks = nlohmann::ordered_json::object();
  nlohmann::ordered_json figures = nlohmann::ordered_json::object();
  nlohmann::ordered_json machine = nlohmann::ordered_json::object();
  std::vector<std::string> failures;
  std::string error;
  bool server_unreachable = false;

  bool ok() const { return error.empty() && failures.empty(); }
  double per_s() const { return seconds > 0 ? static_cast<double>(count) / seconds : 0; }
  // Adds a failure unless `holds`; returns `holds`.
  bool expect(bool holds, const std::string& what);
};

// Stamps the machine and the peak RSS onto the result, and the current RSS
// unless a workload took it already (while its engine was still open).
void finish(BenchResult& r);

nlohmann::ordered_json to_json(const BenchResult& r);
std::string to_table(const BenchResult& r);

}  // namespace runledger::bench

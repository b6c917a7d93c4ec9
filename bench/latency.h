// LatencyRecorder: the latencies of one workload's operations, kept whole
// (one double each) so the percentiles are exact rather than bucketed. Each
// driving thread records into its own recorder and merges it at the end.
// Thread-compatible.
#pragma once

#include <cstdint>
#include <vector>

namespace runledger::bench {

struct LatencySummary {
  uint64_t samples = 0;  // 0: nothing measured
  double p50_ms = 0;
  double p99_ms = 0;
  double p999_ms = 0;
  double max_ms = 0;
};

class LatencyRecorder {
 public:
  void add(double ms) { samples_ms_.push_back(ms); }
  void merge(const LatencyRecorder& other);
  size_t size() const { return samples_ms_.size(); }
  // Sorts the samples it holds.
  LatencySummary summary();

 private:
  std::vector<double> samples_ms_;
};

}  // namespace runledger::bench

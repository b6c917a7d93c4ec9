// LatencyRecorder: see latency.h.
#include "bench/latency.h"

#include <algorithm>
#include <cmath>

namespace runledger::bench {
namespace {

// Nearest-rank percentile of sorted samples.
double rank(const std::vector<double>& sorted, double fraction) {
  size_t n = sorted.size();
  size_t i = static_cast<size_t>(std::ceil(fraction * static_cast<double>(n)));
  return sorted[std::clamp<size_t>(i, 1, n) - 1];
}

}  // namespace

void LatencyRecorder::merge(const LatencyRecorder& other) {
  samples_ms_.insert(samples_ms_.end(), other.samples_ms_.begin(), other.samples_ms_.end());
}

LatencySummary LatencyRecorder::summary() {
  LatencySummary s;
  if (samples_ms_.empty()) return s;
  std::sort(samples_ms_.begin(), samples_ms_.end());
  s.samples = samples_ms_.size();
  s.p50_ms = rank(samples_ms_, 0.50);
  s.p99_ms = rank(samples_ms_, 0.99);
  s.p999_ms = rank(samples_ms_, 0.999);
  s.max_ms = samples_ms_.back();
  return s;
}

}  // namespace runledger::bench

// BenchResult rendering: see result.h.
#include "bench/result.h"

#include <algorithm>

#include <fmt/format.h>

#include "bench/machine.h"

namespace runledger::bench {
namespace {

constexpr double kMibBytes = 1024.0 * 1024.0;
// Failures printed in the table; the JSON has them all.
constexpr size_t kFailuresShownMax = 10;

double ratio(uint64_t a, uint64_t b) {
  return b ? static_cast<double>(a) / static_cast<double>(b) : 0.0;
}

std::string row(std::string_view name, const std::string& value) {
  return fmt::format("  {:<22} {}\n", name, value);
}

std::string json_value_text(const nlohmann::ordered_json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

}  // namespace

bool BenchResult::expect(bool holds, const std::string& what) {
  if (!holds) failures.push_back(what);
  return holds;
}

void finish(BenchResult& r) {
  if (r.rss_bytes == 0) r.rss_bytes = current_rss_bytes();
  // The kernel updates the high-water mark lazily: it may lag the current RSS.
  r.peak_rss_bytes = std::max(peak_rss_bytes(), std::max(r.rss_bytes, current_rss_bytes()));
  r.machine = machine_info();
}

nlohmann::ordered_json to_json(const BenchResult& r) {
  nlohmann::ordered_json j;
  j["workload"] = r.workload;
  j["ok"] = r.ok();
  j["error"] = r.error.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(r.error);
  j["failures"] = r.failures;
  j["parameters"] = r.parameters;
  j["unit"] = r.unit;
  j["count"] = r.count;
  j["seconds"] = r.seconds;
  j["per_s"] = r.per_s();
  j["latency_of"] = r.latency_of;
  j["latency_ms"] = {{"samples", r.latency.samples},
                     {"p50", r.latency.p50_ms},
                     {"p99", r.latency.p99_ms},
                     {"p999", r.latency.p999_ms},
                     {"max", r.latency.max_ms}};
  j["fsync_batches"] = r.fsync_batches;
  j["mean_batch_commands"] = ratio(r.batch_commands, r.fsync_batches);
  j["events"] = r.events;
  j["disk_bytes"] = r.disk_bytes;
  j["bytes_per_event"] = ratio(r.disk_bytes, r.events);
  j["rss_bytes"] = r.rss_bytes;
  j["peak_rss_bytes"] = r.peak_rss_bytes;
  j["checks"] = r.checks;
  j["figures"] = r.figures;
  j["machine"] = r.machine;
  return j;
}

std::string to_table(const BenchResult& r) {
  std::string out = fmt::format("runledger bench {}: {}\n", r.workload,
                                r.ok() ? "OK" : "FAILED (the figures below are not valid)");
  if (!r.error.empty()) out += row("error", r.error);
  for (size_t i = 0; i < r.failures.size() && i < kFailuresShownMax; ++i) {
    out += row("failure", r.failures[i]);
  }
  for (const auto& [k, v] : r.parameters.items()) out += row(k, json_value_text(v));
  out += row(r.unit + "/s",
             fmt::format("{:.0f}  ({} {} in {:.3f} s)", r.per_s(), r.count, r.unit, r.seconds));
  if (r.latency.samples > 0) {
    out +=
        row("latency (" + r.latency_of + ")",
            fmt::format("p50 {:.3f} ms, p99 {:.3f} ms, p999 {:.3f} ms, max {:.3f} ms",
                        r.latency.p50_ms, r.latency.p99_ms, r.latency.p999_ms, r.latency.max_ms));
  }
  out += row("fsync batches", fmt::format("{} (mean {:.1f} commands each)", r.fsync_batches,
                                          ratio(r.batch_commands, r.fsync_batches)));
  out += row("events in the log", std::to_string(r.events));
  out += row("disk", fmt::format("{:.1f} MiB, {:.1f} bytes/event",
                                 static_cast<double>(r.disk_bytes) / kMibBytes,
                                 ratio(r.disk_bytes, r.events)));
  out += row("RSS", fmt::format("{:.1f} MiB now, {:.1f} MiB peak",
                                static_cast<double>(r.rss_bytes) / kMibBytes,
                                static_cast<double>(r.peak_rss_bytes) / kMibBytes));
  for (const auto& [k, v] : r.figures.items()) out += row(k, json_value_text(v));
  for (const auto& [k, v] : r.checks.items()) out += row("check " + k, json_value_text(v));
  out += row("machine", machine_line(r.machine));
  return out;
}

}  // namespace runledger::bench

#include "engine/metrics.h"

#include <fmt/format.h>

#include <string_view>

#include "projections/state.h"

namespace runledger {

void Metrics::command(const char* type, const char* outcome, double latency_ms) {
  MutexLock lk(mu_);
  ++commands_[{type, outcome}];
  size_t i = 0;
  while (i < kLatencyBucketsMs.size() && latency_ms > kLatencyBucketsMs[i]) ++i;
  ++latency_counts_[i];
  latency_sum_ms_ += latency_ms;
  ++latency_count_;
}

void Metrics::batch(size_t commands, size_t events) {
  MutexLock lk(mu_);
  ++fsync_batches_;
  events_appended_ += events;
  batch_commands_sum_ += commands;
  size_t i = 0;
  while (i < kBatchBuckets.size() && static_cast<double>(commands) > kBatchBuckets[i]) ++i;
  ++batch_counts_[i];
}

std::string Metrics::render(const State& s, bool writable,
                            const view_index::FinishedCounts& finished) const {
  MutexLock lk(mu_);
  std::string out;
  auto line = [&out](std::string_view text) {
    out.append(text);
    out.push_back('\n');
  };
  line("# HELP runledger_commands_total Commands decided, by type and outcome.");
  line("# TYPE runledger_commands_total counter");
  // Equal names may sit at different addresses (one per translation unit).
  std::map<std::pair<std::string_view, std::string_view>, uint64_t> by_name;
  for (const auto& [key, n] : commands_) by_name[{key.first, key.second}] += n;
  for (const auto& [key, n] : by_name) {
    line(fmt::format("runledger_commands_total{{type=\"{}\",outcome=\"{}\"}} {}", key.first,
                     key.second, n));
  }
  line("# HELP runledger_command_latency_seconds From submission to durable reply.");
  line("# TYPE runledger_command_latency_seconds histogram");
  uint64_t cumulative = 0;
  for (size_t i = 0; i < kLatencyBucketsMs.size(); ++i) {
    cumulative += latency_counts_[i];
    line(fmt::format("runledger_command_latency_seconds_bucket{{le=\"{}\"}} {}",
                     kLatencyBucketsMs[i] / 1000.0, cumulative));
  }
  cumulative += latency_counts_.back();
  line(fmt::format("runledger_command_latency_seconds_bucket{{le=\"+Inf\"}} {}", cumulative));
  line(fmt::format("runledger_command_latency_seconds_sum {}", latency_sum_ms_ / 1000.0));
  line(fmt::format("runledger_command_latency_seconds_count {}", latency_count_));
  line("# HELP runledger_events_appended_total Events made durable.");
  line("# TYPE runledger_events_appended_total counter");
  line(fmt::format("runledger_events_appended_total {}", events_appended_));
  line("# HELP runledger_fsync_batches_total Group commits (one fsync each).");
  line("# TYPE runledger_fsync_batches_total counter");
  line(fmt::format("runledger_fsync_batches_total {}", fsync_batches_));
  line("# HELP runledger_batch_commands Commands per group commit.");
  line("# TYPE runledger_batch_commands histogram");
  cumulative = 0;
  for (size_t i = 0; i < kBatchBuckets.size(); ++i) {
    cumulative += batch_counts_[i];
    line(fmt::format("runledger_batch_commands_bucket{{le=\"{}\"}} {}", kBatchBuckets[i],
                     cumulative));
  }
  cumulative += batch_counts_.back();
  line(fmt::format("runledger_batch_commands_bucket{{le=\"+Inf\"}} {}", cumulative));
  line(fmt::format("runledger_batch_commands_sum {}", batch_commands_sum_));
  line(fmt::format("runledger_batch_commands_count {}", fsync_batches_));
  line(
      "# HELP runledger_jobs Jobs by the state of their latest attempt: live ones in memory, "
      "finished ones in the store.");
  line("# TYPE runledger_jobs gauge");
  for (const auto& [state, n] : s.jobs.count_by_state) {
    // A finished job still in memory waits for its batch to be durable;
    // then it leaves memory and joins the stored count.
    auto shown = static_cast<int64_t>(n);
    for (size_t slot = 0; slot < view_index::kFinishedStates; ++slot) {
      if (state == view_index::kFinishedStateNames[slot]) shown = finished[slot];
    }
    line(fmt::format("runledger_jobs{{state=\"{}\"}} {}", state, shown));
  }
  line("# HELP runledger_connectors Connectors by status.");
  line("# TYPE runledger_connectors gauge");
  std::map<std::string, size_t> by_status;
  for (const auto& [id, c] : s.connectors.by_id) ++by_status[connectors::to_string(c.status)];
  for (const auto& [status, n] : by_status) {
    line(fmt::format("runledger_connectors{{status=\"{}\"}} {}", status, n));
  }
  line("# HELP runledger_open_holds Open holds by kind.");
  line("# TYPE runledger_open_holds gauge");
  for (const auto& [kind, n] : s.holds.open_by_kind) {
    line(fmt::format("runledger_open_holds{{kind=\"{}\"}} {}", kind, n));
  }
  line("# HELP runledger_lease_expiries_total Leases expired by the engine's timers.");
  line("# TYPE runledger_lease_expiries_total counter");
  line(fmt::format("runledger_lease_expiries_total {}", lease_expiries_));
  line("# HELP runledger_write_failures_total Group commits the store refused.");
  line("# TYPE runledger_write_failures_total counter");
  line(fmt::format("runledger_write_failures_total {}", write_failures_));
  line(
      "# HELP runledger_writer_hand_overs_total Group commits whose batch the writer thread "
      "closed itself, the sequencer being asleep when the write before it ended.");
  line("# TYPE runledger_writer_hand_overs_total counter");
  line(fmt::format("runledger_writer_hand_overs_total {}", writer_hand_overs_));
  line("# HELP runledger_last_seq The last durable global sequence number.");
  line("# TYPE runledger_last_seq gauge");
  line(fmt::format("runledger_last_seq {}", s.last_seq));
  line("# HELP runledger_writable 1 when the engine accepts writes.");
  line("# TYPE runledger_writable gauge");
  line(fmt::format("runledger_writable {}", writable ? 1 : 0));
  line("# HELP runledger_startup_replayed_events Events folded at start-up.");
  line("# TYPE runledger_startup_replayed_events gauge");
  line(fmt::format("runledger_startup_replayed_events {}", replayed_events_));
  line("# HELP runledger_startup_replay_seconds How long folding them took.");
  line("# TYPE runledger_startup_replay_seconds gauge");
  line(fmt::format("runledger_startup_replay_seconds {}", replay_seconds_));
  return out;
}

}  // namespace runledger

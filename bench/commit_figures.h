// CommitFigures: the group-commit counters of the engine's metrics (fsync
// batches, commands in them, events appended, lease expiries), read from
// the Prometheus text the engine renders, either in process or from a
// server's GET /metrics. A workload takes them before and after its run and
// reports the difference.
#pragma once

#include <cstdint>
#include <string_view>

namespace runledger {
class Engine;
}

namespace runledger::bench {

struct CommitFigures {
  uint64_t fsync_batches = 0;
  uint64_t batch_commands = 0;
  uint64_t events_appended = 0;
  uint64_t lease_expiries = 0;
  uint64_t last_seq = 0;

  CommitFigures since(const CommitFigures& before) const;
};

CommitFigures parse_commit_figures(std::string_view metrics_text);
// A read on the engine's sequencer.
CommitFigures commit_figures(Engine& engine);

}  // namespace runledger::bench

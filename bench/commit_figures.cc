// CommitFigures: see commit_figures.h.
#include "bench/commit_figures.h"

#include <charconv>
#include <string>

#include "engine/engine.h"

namespace runledger::bench {
namespace {

// The value of an unlabelled sample line "name value" (0 when absent).
uint64_t sample(std::string_view text, std::string_view name) {
  size_t at = 0;
  while ((at = text.find(name, at)) != std::string_view::npos) {
    bool line_start = at == 0 || text[at - 1] == '\n';
    size_t value_at = at + name.size();
    if (line_start && value_at < text.size() && text[value_at] == ' ') {
      double v = 0;
      const char* b = text.data() + value_at + 1;
      std::from_chars(b, text.data() + text.size(), v);
      return static_cast<uint64_t>(v);
    }
    at = value_at;
  }
  return 0;
}

}  // namespace

CommitFigures CommitFigures::since(const CommitFigures& b) const {
  CommitFigures d;
  d.fsync_batches = fsync_batches - b.fsync_batches;
  d.batch_commands = batch_commands - b.batch_commands;
  d.events_appended = events_appended - b.events_appended;
  d.lease_expiries = lease_expiries - b.lease_expiries;
  d.last_seq = last_seq;
  return d;
}

CommitFigures parse_commit_figures(std::string_view text) {
  CommitFigures f;
  f.fsync_batches = sample(text, "runledger_fsync_batches_total");
  f.batch_commands = sample(text, "runledger_batch_commands_sum");
  f.events_appended = sample(text, "runledger_events_appended_total");
  f.lease_expiries = sample(text, "runledger_lease_expiries_total");
  f.last_seq = sample(text, "runledger_last_seq");
  return f;
}

CommitFigures commit_figures(Engine& engine) {
  std::string text;
  engine.read([&](const State& s, const Decision*) {
    text = engine.metrics().render(s, engine.writable(), engine.stored_finished_jobs());
    return Reply{200, ""};
  });
  return parse_commit_figures(text);
}

}  // namespace runledger::bench

// The log fold and the views of the CLI: see cli_state.h.
#include "tools/cli_state.h"

#include <algorithm>

#include "base/sha256.h"
#include "engine/entities.h"
#include "engine/state_loader.h"
#include "events/read_ahead.h"
#include "projections/stream_name.h"

namespace runledger::cli {

Status fold_log(const EventStore& store, const FoldLimits& limits, State* out, Progress* progress) {
  State s;
  Status inner;
  Status read = read_range_ahead(store, 0, limits.until_seq,
                                 [&](const fb::Event& e, std::string_view, const Hash& hash) {
                                   if (limits.until_ms && e.recorded_at_ms() > *limits.until_ms)
                                     return false;
                                   inner = check_continuity(s, e);
                                   if (!inner.ok()) return false;
                                   evolve(s, e);
                                   s.last_hash = hash;
                                   if (progress != nullptr) progress->update(s.last_seq);
                                   return true;
                                 });
  if (!read.ok()) return read;
  if (!inner.ok()) return inner;
  *out = std::move(s);
  return Status::Ok();
}

ViewMap views_of(const State& s) {
  ViewMap out;
  for (const auto& [id, j] : s.jobs.by_id) out.emplace(job_stream(id), jobs::view(s, j));
  for (const auto& [id, c] : s.connectors.by_id)
    out.emplace(connector_stream(id), connectors::view(c));
  for (const auto& [id, h] : s.holds.by_id) out.emplace(hold_stream(id), holds::view(h));
  return out;
}

std::optional<nlohmann::json> view_of(const State& s, std::string_view stream) {
  auto name = parse_stream(stream);
  if (!name) return std::nullopt;
  const std::string id(name->id);
  switch (name->kind) {
    case StreamKind::kJob: {
      auto it = s.jobs.by_id.find(id);
      if (it != s.jobs.by_id.end()) return jobs::view(s, it->second);
      break;
    }
    case StreamKind::kConnector: {
      auto it = s.connectors.by_id.find(id);
      if (it != s.connectors.by_id.end()) return connectors::view(it->second);
      break;
    }
    case StreamKind::kHold: {
      auto it = s.holds.by_id.find(id);
      if (it != s.holds.by_id.end()) return holds::view(it->second);
      break;
    }
  }
  return std::nullopt;
}

}  // namespace runledger::cli

// The log fold and the views of the CLI: see cli_state.h.
#include "tools/cli_state.h"

#include <algorithm>

#include "engine/entities.h"
#include "events/hash.h"

namespace runledger::cli {

namespace {

Status check_continuity(const State& s, const fb::Event& e) {
  if (e.seq() != s.last_seq + 1) {
    return Status::Corruption("gap in sequence: expected seq " + std::to_string(s.last_seq + 1) +
                                  ", found " + std::to_string(e.seq()),
                              s.last_seq + 1);
  }
  const auto* prev = e.prev_hash();
  if (prev->size() != s.last_hash.size() ||
      !std::equal(prev->begin(), prev->end(), s.last_hash.begin())) {
    return Status::Corruption("hash chain broken: prev_hash is not the hash of the event before",
                              e.seq());
  }
  return Status::Ok();
}

}  // namespace

Status fold_log(const EventStore& store, const FoldLimits& limits, State* out, Progress* progress) {
  State s;
  Status inner;
  Status read = store.read_range(0, limits.until_seq, [&](const fb::Event& e, std::string_view b) {
    if (limits.until_ms && e.recorded_at_ms() > *limits.until_ms) return false;
    inner = check_continuity(s, e);
    if (!inner.ok()) return false;
    evolve(s, e);
    s.last_hash = sha256(b);
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
  for (const auto& [id, j] : s.jobs.by_id) out.emplace("job/" + id, jobs::view(s, j));
  for (const auto& [id, c] : s.connectors.by_id)
    out.emplace("connector/" + id, connectors::view(c));
  for (const auto& [id, h] : s.holds.by_id) out.emplace("hold/" + id, holds::view(h));
  return out;
}

std::optional<nlohmann::json> view_of(const State& s, std::string_view stream) {
  auto name = parse_stream(stream);
  if (!name) return std::nullopt;
  const std::string id(name->id);
  switch (name->kind) {
    case EntityKind::kJob: {
      auto it = s.jobs.by_id.find(id);
      if (it != s.jobs.by_id.end()) return jobs::view(s, it->second);
      break;
    }
    case EntityKind::kConnector: {
      auto it = s.connectors.by_id.find(id);
      if (it != s.connectors.by_id.end()) return connectors::view(it->second);
      break;
    }
    case EntityKind::kHold: {
      auto it = s.holds.by_id.find(id);
      if (it != s.holds.by_id.end()) return holds::view(it->second);
      break;
    }
  }
  return std::nullopt;
}

nlohmann::json state_json(const State& s) {
  nlohmann::json jobs_out = nlohmann::json::array();
  for (const auto& [id, j] : s.jobs.by_id) jobs_out.push_back(jobs::view(s, j));
  nlohmann::json connectors_out = nlohmann::json::array();
  for (const auto& [id, c] : s.connectors.by_id) connectors_out.push_back(connectors::view(c));
  nlohmann::json holds_out = nlohmann::json::array();
  for (const auto& [id, h] : s.holds.by_id) holds_out.push_back(holds::view(h));
  return {{"seq", s.last_seq},
          {"jobs", std::move(jobs_out)},
          {"connectors", std::move(connectors_out)},
          {"holds", std::move(holds_out)}};
}

}  // namespace runledger::cli

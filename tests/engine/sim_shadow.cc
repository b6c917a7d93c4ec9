// ShadowFold: see sim_shadow.h.
#include "tests/engine/sim_shadow.h"

#include "base/sha256.h"
#include "engine/entities.h"
#include "events/event_codec.h"

namespace runledger::testing {

LogTail ShadowFold::catch_up(const EventStore& store) {
  LogTail tail;
  Status st = store.read_range(state_.last_seq, 0, [&](const fb::Event& e, std::string_view bytes) {
    std::string stream = e.stream() ? e.stream()->str() : "";
    if (e.seq() != state_.last_seq + 1) {
      tail.error =
          "event " + std::to_string(e.seq()) + " follows " + std::to_string(state_.last_seq);
      return false;
    }
    // A finished entity left memory: load its history first, as the engine does.
    if (e.seq() > 1 && !in_memory(state_, stream)) {
      Status h = hydrate(store, state_, stream, e.seq() - 1);
      if (!h.ok()) {
        tail.error = "hydrating " + stream + ": " + h.ToString();
        return false;
      }
    }
    evolve(state_, e);
    state_.last_hash = sha256(bytes);
    tail.types.emplace_back(event_type_name(e.payload_type()));
    ++types_seen_[tail.types.back()];
    tail.streams.insert(stream);
    tail.command_ids.insert(e.command_id() ? e.command_id()->str() : "");
    return true;
  });
  if (!st.ok() && tail.error.empty()) tail.error = "reading the log: " + st.ToString();
  for (const auto& stream : tail.streams) evict_if_finished(state_, stream);
  return tail;
}

nlohmann::json entity_json(const State& s, const std::string& stream) {
  auto name = parse_stream(stream);
  if (!name) return nullptr;
  std::string id(name->id);
  switch (name->kind) {
    case StreamKind::kJob: {
      auto it = s.jobs.by_id.find(id);
      if (it == s.jobs.by_id.end()) return nullptr;
      return {jobs::to_json(it->second), jobs::view(s, it->second)};
    }
    case StreamKind::kConnector: {
      auto it = s.connectors.by_id.find(id);
      if (it == s.connectors.by_id.end()) return nullptr;
      return {connectors::to_json(it->second), connectors::view(it->second)};
    }
    case StreamKind::kHold: {
      auto it = s.holds.by_id.find(id);
      if (it == s.holds.by_id.end()) return nullptr;
      return {holds::to_json(it->second), holds::view(it->second)};
    }
  }
  return nullptr;
}

}  // namespace runledger::testing

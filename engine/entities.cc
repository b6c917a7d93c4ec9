#include "engine/entities.h"

#include <optional>
#include <vector>

namespace runledger {

namespace {

// The maps compare transparently: no key is built to look one up.
template <typename Map>
auto* find(Map& m, std::string_view id) {
  auto it = m.find(id);
  return it == m.end() ? nullptr : &it->second;
}

}  // namespace

bool in_memory(const State& s, std::string_view stream) {
  return version_in_memory(s, stream) != 0;
}

uint32_t version_in_memory(const State& s, std::string_view stream) {
  return entity_status(s, stream).version;
}

EntityStatus entity_status(const State& s, std::string_view stream) {
  auto name = parse_stream(stream);
  if (!name) return {};
  switch (name->kind) {
    case StreamKind::kJob: {
      const auto* j = find(s.jobs.by_id, name->id);
      return j ? EntityStatus{j->version, jobs::finished(*j)} : EntityStatus{};
    }
    case StreamKind::kConnector: {
      const auto* c = find(s.connectors.by_id, name->id);
      return c ? EntityStatus{c->version, connectors::finished(*c)} : EntityStatus{};
    }
    case StreamKind::kHold: {
      const auto* h = find(s.holds.by_id, name->id);
      return h ? EntityStatus{h->version, holds::finished(*h)} : EntityStatus{};
    }
  }
  return {};
}

Status hydrate(const EventStore& store, State& s, std::string_view stream, uint64_t until_seq,
               bool* stored_none) {
  if (stored_none != nullptr) *stored_none = false;
  auto name = parse_stream(stream);
  if (!name || in_memory(s, stream)) return Status::Ok();
  // Made at the first event: most streams asked for are new, and an empty
  // State is not free (its maps of counts).
  std::optional<State> folded;
  Status st = store.read_stream(stream, until_seq, [&](const fb::Event& e, std::string_view) {
    if (!folded) folded.emplace();
    evolve(*folded, e);
    return true;
  });
  if (st.ok() && !folded && stored_none != nullptr) *stored_none = true;
  if (!st.ok() || !folded) return st;
  State& scratch = *folded;
  std::string id(name->id);
  switch (name->kind) {
    case StreamKind::kJob: {
      auto it = scratch.jobs.by_id.find(id);
      if (it != scratch.jobs.by_id.end()) jobs::adopt(s, std::move(it->second));
      break;
    }
    case StreamKind::kConnector: {
      auto it = scratch.connectors.by_id.find(id);
      if (it != scratch.connectors.by_id.end()) connectors::adopt(s, std::move(it->second));
      break;
    }
    case StreamKind::kHold: {
      auto it = scratch.holds.by_id.find(id);
      if (it != scratch.holds.by_id.end()) holds::adopt(s, std::move(it->second));
      break;
    }
  }
  return Status::Ok();
}

bool is_finished(const State& s, std::string_view stream) {
  if (!parse_stream(stream)) return false;
  const EntityStatus entity = entity_status(s, stream);
  return entity.version == 0 || entity.finished;  // gone from memory, or finished in it
}

void evict_if_finished(State& s, std::string_view stream) {
  auto name = parse_stream(stream);
  if (!name || !entity_status(s, stream).finished_in_memory()) return;
  std::string id(name->id);
  switch (name->kind) {
    case StreamKind::kJob:
      jobs::evict(s, id);
      break;
    case StreamKind::kConnector:
      connectors::evict(s, id);
      break;
    case StreamKind::kHold:
      holds::evict(s, id);
      break;
  }
}

namespace {

// Collects the ids first: evicting erases from the map being walked.
template <typename Map, typename Finished, typename Evict>
void evict_finished_of(State& s, const Map& m, Finished finished, Evict evict) {
  std::vector<std::string> ids;
  for (const auto& [id, entity] : m) {
    if (finished(entity)) ids.push_back(id);
  }
  for (const std::string& id : ids) evict(s, id);
}

}  // namespace

void evict_all_finished(State& s) {
  evict_finished_of(s, s.jobs.by_id, jobs::finished, jobs::evict);
  evict_finished_of(s, s.connectors.by_id, connectors::finished, connectors::evict);
  evict_finished_of(s, s.holds.by_id, holds::finished, holds::evict);
}

std::optional<std::string> finished_view(const State& s, std::string_view stream) {
  auto name = parse_stream(stream);
  if (!name || !entity_status(s, stream).finished_in_memory()) return std::nullopt;
  switch (name->kind) {
    case StreamKind::kJob:
      return jobs::view_text(s, *find(s.jobs.by_id, name->id));
    case StreamKind::kConnector:
      return std::nullopt;  // a deleted connector answers 404: no view
    case StreamKind::kHold:
      return holds::view(*find(s.holds.by_id, name->id)).dump();
  }
  return std::nullopt;
}

}  // namespace runledger

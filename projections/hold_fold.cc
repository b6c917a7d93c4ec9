// The hold fold: HoldPlaced and HoldReleased into HoldsState, and the
// snapshot/hydration entry points (adopt, evict) that must leave the same
// indexes behind as the fold does. The indexes hold open holds only:
// blocking_by_target (EXECUTION_STATE_UNKNOWN), recovery_by_target
// (RESULT_UNKNOWN) and open_by_kind. Never reads a clock.
#include <cassert>
#include <string_view>

#include "projections/state.h"
#include "projections/stream_name.h"

namespace runledger::holds {

namespace {

std::string str(const flatbuffers::String* s) { return s != nullptr ? s->str() : std::string(); }

// The index of open holds of `kind`, or nullptr for a kind that has none.
std::map<std::string, std::set<std::string>>* target_index(HoldsState& hs,
                                                           const std::string& kind) {
  if (kind == kExecutionStateUnknown) return &hs.blocking_by_target;
  if (kind == kResultUnknown) return &hs.recovery_by_target;
  return nullptr;
}

void index_open(HoldsState& hs, const Hold& h) {
  if (h.released) return;
  if (auto* index = target_index(hs, h.kind)) (*index)[h.target].insert(h.id);
  ++hs.open_by_kind[h.kind];
}

// Removes an open hold from the indexes; empty entries go too, so the
// indexes equal ones rebuilt from by_id.
void unindex_open(HoldsState& hs, const Hold& h) {
  if (h.released) return;
  if (auto* index = target_index(hs, h.kind)) {
    auto it = index->find(h.target);
    if (it != index->end()) {
      it->second.erase(h.id);
      if (it->second.empty()) index->erase(it);
    }
  }
  auto k = hs.open_by_kind.find(h.kind);
  if (k != hs.open_by_kind.end() && --k->second == 0) hs.open_by_kind.erase(k);
}

std::string hold_id_of(const fb::Event& e) {
  std::string stream = str(e.stream());
  const std::string_view id = stream_id(stream, StreamKind::kHold);
  assert(!id.empty() && "hold event outside a hold stream");
  return id.empty() ? stream : std::string(id);
}

void on_placed(HoldsState& hs, const fb::Event& e, const fb::HoldPlaced& p) {
  Hold h;
  h.id = hold_id_of(e);
  h.target = str(p.target());
  h.kind = str(p.kind());
  h.job = str(p.job());
  h.attempt = p.attempt();
  h.reason = str(p.reason());
  h.placed_by = str(e.actor());
  h.placed_at_ms = e.recorded_at_ms();
  h.version = e.stream_version();
  auto old = hs.by_id.find(h.id);
  if (old != hs.by_id.end()) unindex_open(hs, old->second);
  index_open(hs, h);
  hs.by_id[h.id] = std::move(h);
}

void on_released(HoldsState& hs, const fb::Event& e, const fb::HoldReleased& r) {
  auto it = hs.by_id.find(hold_id_of(e));
  // The engine loads a hold before it decides on it, so its release always
  // finds it; a replay folds HoldPlaced first.
  assert(it != hs.by_id.end() && "HoldReleased for a hold not in memory");
  if (it == hs.by_id.end()) return;
  Hold& h = it->second;
  unindex_open(hs, h);
  h.released = true;
  h.released_by = str(e.actor());
  h.released_at_ms = e.recorded_at_ms();
  h.release_note = str(r.note());
  h.execution_stopped = r.execution_stopped();
  h.outcome = str(r.outcome());
  h.version = e.stream_version();
}

}  // namespace

void evolve(State& s, const fb::Event& e) {
  if (const auto* placed = e.payload_as_HoldPlaced()) {
    on_placed(s.holds, e, *placed);
  } else if (const auto* released = e.payload_as_HoldReleased()) {
    on_released(s.holds, e, *released);
  }
}

bool finished(const Hold& h) { return h.released; }

void adopt(State& s, Hold h) {
  HoldsState& hs = s.holds;
  auto old = hs.by_id.find(h.id);
  if (old != hs.by_id.end()) unindex_open(hs, old->second);
  index_open(hs, h);
  std::string id = h.id;
  hs.by_id[id] = std::move(h);
}

void evict(State& s, const std::string& id) {
  HoldsState& hs = s.holds;
  auto it = hs.by_id.find(id);
  if (it == hs.by_id.end()) return;
  unindex_open(hs, it->second);
  hs.by_id.erase(it);
}

}  // namespace runledger::holds

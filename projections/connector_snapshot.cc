// The connector's lossless JSON (every field, for comparing states) and how
// a connector enters and leaves memory. Its form:
//   {"id","name","status","sync_status","last_error","last_synced_at_ms",
//    "sync_schedule_s","next_slot_ms","sync_id","sync_trigger",
//    "sync_started_at_ms","created_at_ms","updated_at_ms","version",
//    "documents": [[id, status] | [id, "failed", error], ...],
//    "ended_syncs": [[sync_id, how], ...]}
// Documents are arrays, not objects: a connector may hold 100k of them.
#include "projections/connector.h"
#include "projections/connector_internal.h"
#include "projections/state.h"

namespace runledger::connectors {

namespace {

nlohmann::json documents_json(const Connector& c) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [id, doc] : c.documents) {
    nlohmann::json item = nlohmann::json::array({id, to_string(doc.status)});
    if (doc.status == DocStatus::kFailed) item.push_back(doc.error);
    out.push_back(std::move(item));
  }
  return out;
}

}  // namespace

nlohmann::json to_json(const Connector& c) {
  nlohmann::json ended = nlohmann::json::array();
  for (const auto& e : c.ended_syncs) ended.push_back({e.sync_id, e.how});
  return {{"id", c.id},
          {"name", c.name},
          {"status", to_string(c.status)},
          {"sync_status", to_string(c.sync_status)},
          {"last_error", c.last_error},
          {"last_synced_at_ms", c.last_synced_at_ms},
          {"sync_schedule_s", c.sync_schedule_s},
          {"next_slot_ms", c.next_slot_ms},
          {"sync_id", c.sync_id},
          {"sync_trigger", c.sync_trigger},
          {"sync_started_at_ms", c.sync_started_at_ms},
          {"created_at_ms", c.created_at_ms},
          {"updated_at_ms", c.updated_at_ms},
          {"version", c.version},
          {"documents", documents_json(c)},
          {"ended_syncs", std::move(ended)}};
}

void adopt(State& s, Connector c) {
  evict(s, c.id);
  int64_t slot_ms = c.next_slot_ms;
  c.next_slot_ms = 0;  // set_next_slot indexes it afresh
  auto [it, inserted] = s.connectors.by_id.emplace(c.id, std::move(c));
  internal::set_next_slot(s.connectors, it->second, slot_ms);
}

void evict(State& s, const std::string& id) {
  auto it = s.connectors.by_id.find(id);
  if (it == s.connectors.by_id.end()) return;
  internal::set_next_slot(s.connectors, it->second, 0);
  s.connectors.by_id.erase(it);
}

bool finished(const Connector&) { return false; }

}  // namespace runledger::connectors

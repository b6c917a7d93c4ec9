// The connector's lossless internal JSON (projection snapshots) and how a
// connector enters and leaves memory. Snapshot form:
//   {"id","name","status","sync_status","last_error","last_synced_at_ms",
//    "sync_schedule_s","next_slot_ms","sync_id","sync_trigger",
//    "sync_started_at_ms","created_at_ms","updated_at_ms","version",
//    "documents": [[id, status] | [id, "failed", error], ...],
//    "ended_syncs": [[sync_id, how], ...]}
// Documents are arrays, not objects: a connector may hold 100k of them.
#include <stdexcept>

#include "projections/connector.h"
#include "projections/connector_internal.h"
#include "projections/state.h"

namespace runledger::connectors {

namespace {

template <typename E>
E parse_or_throw(std::optional<E> v, const std::string& text) {
  if (!v) throw std::invalid_argument("connector snapshot: unknown value " + text);
  return *v;
}

nlohmann::json documents_json(const Connector& c) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [id, doc] : c.documents) {
    nlohmann::json item = nlohmann::json::array({id, to_string(doc.status)});
    if (doc.status == DocStatus::kFailed) item.push_back(doc.error);
    out.push_back(std::move(item));
  }
  return out;
}

void read_documents(const nlohmann::json& list, Connector& c) {
  for (const auto& item : list) {
    std::string status_text = item.at(1).get<std::string>();
    DocStatus status = parse_or_throw(doc_status_from(status_text), status_text);
    std::string error = item.size() > 2 ? item.at(2).get<std::string>() : std::string();
    internal::set_document(c, item.at(0).get<std::string>(), status, std::move(error));
  }
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

Connector from_json(const nlohmann::json& j) {
  Connector c;
  c.id = j.at("id").get<std::string>();
  c.name = j.at("name").get<std::string>();
  std::string status = j.at("status").get<std::string>();
  c.status = parse_or_throw(status_from(status), status);
  std::string sync_status = j.at("sync_status").get<std::string>();
  c.sync_status = parse_or_throw(sync_status_from(sync_status), sync_status);
  c.last_error = j.at("last_error").get<std::string>();
  c.last_synced_at_ms = j.at("last_synced_at_ms").get<int64_t>();
  c.sync_schedule_s = j.at("sync_schedule_s").get<int64_t>();
  c.next_slot_ms = j.at("next_slot_ms").get<int64_t>();
  c.sync_id = j.at("sync_id").get<std::string>();
  c.sync_trigger = j.at("sync_trigger").get<std::string>();
  c.sync_started_at_ms = j.at("sync_started_at_ms").get<int64_t>();
  c.created_at_ms = j.at("created_at_ms").get<int64_t>();
  c.updated_at_ms = j.at("updated_at_ms").get<int64_t>();
  c.version = j.at("version").get<uint32_t>();
  read_documents(j.at("documents"), c);
  for (const auto& e : j.at("ended_syncs")) {
    c.ended_syncs.push_back({e.at(0).get<std::string>(), e.at(1).get<std::string>()});
  }
  return c;
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

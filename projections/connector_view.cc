// The connector as the HTTP API shows it (docs/api.md "Connectors"): the
// connector object and the document list. Times are RFC 3339 strings; unset
// values are null rather than absent, so every reply has the same keys.
#include "base/time_text.h"
#include "events/event_codec.h"
#include "projections/connector.h"

namespace runledger::connectors {

namespace {

nlohmann::json time_or_null(int64_t ms) {
  return ms == 0 ? nlohmann::json(nullptr) : nlohmann::json(format_time_ms(ms));
}

nlohmann::json sync_or_null(const Connector& c) {
  if (!c.running()) return nullptr;
  return {{"sync_id", c.sync_id},
          {"trigger", c.sync_trigger},
          {"started_at", format_time_ms(c.sync_started_at_ms)}};
}

int64_t count(const Connector& c, DocStatus s) { return c.document_counts[static_cast<size_t>(s)]; }

}  // namespace

nlohmann::json view(const Connector& c) {
  return {
      {"id", c.id},
      {"name", c.name},
      {"status", to_string(c.status)},
      {"sync_status", to_string(c.sync_status)},
      {"last_error", c.last_error.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.last_error)},
      {"last_synced_at", time_or_null(c.last_synced_at_ms)},
      {"sync_schedule_s",
       c.sync_schedule_s == 0 ? nlohmann::json(nullptr) : nlohmann::json(c.sync_schedule_s)},
      {"sync", sync_or_null(c)},
      {"documents",
       {{"pending", count(c, DocStatus::kPending)},
        {"running", count(c, DocStatus::kRunning)},
        {"indexed", count(c, DocStatus::kIndexed)},
        {"failed", count(c, DocStatus::kFailed)}}},
      {"created_at", format_time_ms(c.created_at_ms)},
      {"updated_at", format_time_ms(c.updated_at_ms)},
      {"version", c.version},
  };
}

// documents is an ordered map, so the list comes out sorted by id.
nlohmann::json documents_view(const Connector& c, std::optional<DocStatus> filter) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [id, doc] : c.documents) {
    if (filter && doc.status != *filter) continue;
    nlohmann::json item = {{"id", id}, {"status", to_string(doc.status)}};
    if (doc.status == DocStatus::kFailed) item["error"] = doc.error;
    list.push_back(std::move(item));
  }
  return {{"documents", std::move(list)}};
}

}  // namespace runledger::connectors

// How the connector decider refuses a command, and the checks and
// conversions of the document lists a sync report carries.
#include <fmt/format.h>

#include "projections/connector.h"
#include "projections/connector_commands.h"
#include "projections/connector_internal.h"

namespace runledger::connectors::internal {

namespace {

// What the connector may do now, for the "allowed" field of a conflict, so
// an operator sees the way forward without reading the docs.
nlohmann::json allowed(const Connector& c) {
  nlohmann::json out = nlohmann::json::array();
  for (std::string_view command : allowed_commands(c)) out.push_back(command);
  return out;
}

size_t count(const DocumentReport& d) {
  return d.pending.size() + d.running.size() + d.indexed.size() + d.failed.size();
}

bool valid_document_id(const std::string& id) {
  return !id.empty() && id.size() <= kDocumentIdBytesMax;
}

bool all_valid(const std::vector<std::string>& ids) {
  for (const auto& id : ids) {
    if (!valid_document_id(id)) return false;
  }
  return true;
}

}  // namespace

Decision not_found(const std::string& id) {
  return Decision::reject(RejectionCode::kNotFound, fmt::format("connector {} not found", id));
}

Decision invalid_field(std::string_view field, std::string message) {
  return Decision::reject(RejectionCode::kInvalidField, std::move(message),
                          {{"field", std::string(field)}});
}

// "state" is what every refused transition names (docs/api.md "Errors"); a
// connector's state is its operating state, `status`, which is also given
// under its own name beside `sync_status`.
Decision conflict(const Connector& c, RejectionCode code, std::string message) {
  return Decision::reject(code, std::move(message),
                          {{"state", to_string(c.status)},
                           {"status", to_string(c.status)},
                           {"sync_status", to_string(c.sync_status)},
                           {"allowed", allowed(c)}});
}

std::optional<Decision> refused(const Connector& c, std::string_view command) {
  const Refusal* r = refusal_of(c, command);
  if (r == nullptr) return std::nullopt;
  return conflict(c, r->code, std::string(r->message));
}

std::optional<Decision> check_documents(const DocumentReport& d) {
  if (count(d) > kDocumentsPerReportMax) {
    return invalid_field("documents",
                         fmt::format("documents: at most {} per report", kDocumentsPerReportMax));
  }
  bool ids_ok = all_valid(d.pending) && all_valid(d.running) && all_valid(d.indexed);
  for (const auto& [id, error] : d.failed) ids_ok = ids_ok && valid_document_id(id);
  if (!ids_ok) {
    return invalid_field(
        "documents", fmt::format("documents: every id must be 1 to {} bytes", kDocumentIdBytesMax));
  }
  return std::nullopt;
}

bool empty(const DocumentReport& d) { return count(d) == 0; }

std::unique_ptr<fb::DocumentChangesT> to_changes(const DocumentReport& d) {
  if (empty(d)) return nullptr;
  auto out = std::make_unique<fb::DocumentChangesT>();
  out->pending = d.pending;
  out->running = d.running;
  out->indexed = d.indexed;
  out->failed.reserve(d.failed.size());
  for (const auto& [id, error] : d.failed) {
    auto f = std::make_unique<fb::DocumentFailureT>();
    f->id = id;
    f->error = cut_code_points(error, kDocumentErrorCodePointsMax);
    out->failed.push_back(std::move(f));
  }
  return out;
}

}  // namespace runledger::connectors::internal

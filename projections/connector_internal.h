// Helpers shared by the connector decider, fold and views (connector_*.cc
// only; not part of the model's API).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "projections/connector.h"
#include "projections/state.h"

namespace runledger::connectors::internal {

inline constexpr int64_t kMsPerS = 1000;

// The connector `id`, or nullptr when it is not in memory.
inline const Connector* find(const State& s, const std::string& id) {
  auto it = s.connectors.by_id.find(id);
  return it == s.connectors.by_id.end() ? nullptr : &it->second;
}

// The connector id of a "connector/<id>" stream (empty when it is not one).
std::string_view id_of_stream(std::string_view stream);

// ---- rejections ----
Decision not_found(const std::string& id);
// 422 naming `field`.
Decision invalid_field(std::string_view field, std::string message);
// 409 with the connector's state (its status), status, sync_status and the
// commands it allows.
Decision conflict(const Connector& c, RejectionCode code, std::string message);
// The conflict of the table's first refusal of `command` (a kCmd name of
// connector_commands.h) that holds for `c`; nullopt when `c` accepts it.
std::optional<Decision> refused(const Connector& c, std::string_view command);

// 422 when a report's document lists are out of range, else nullopt.
std::optional<Decision> check_documents(const DocumentReport& d);
// The event table of a report's documents (errors cut to
// kDocumentErrorCodePointsMax); nullptr when the report names none.
std::unique_ptr<fb::DocumentChangesT> to_changes(const DocumentReport& d);
bool empty(const DocumentReport& d);

// ---- fold helpers (keep document_counts and the slot index in step) ----
void set_status(Connector& c, Status to);
void set_document(Connector& c, const std::string& id, DocStatus status, std::string error);
void apply_changes(Connector& c, const fb::DocumentChanges* changes);
void set_next_slot(ConnectorsState& s, Connector& c, int64_t slot_ms);
void remember_ended_sync(Connector& c, std::string sync_id, std::string how);

}  // namespace runledger::connectors::internal

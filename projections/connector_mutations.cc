// The few ways the fold changes a connector, each keeping an invariant:
// last_error is empty unless status is error, document_counts matches
// documents, the slot index matches next_slot_ms, ended_syncs stays bounded.
#include "projections/connector.h"
#include "projections/connector_internal.h"

namespace runledger::connectors::internal {

namespace {

size_t index_of(DocStatus s) { return static_cast<size_t>(s); }

}  // namespace

void set_status(Connector& c, Status to) {
  c.status = to;
  if (to != Status::kError) c.last_error.clear();
}

void set_document(Connector& c, const std::string& id, DocStatus status, std::string error) {
  auto [it, inserted] = c.documents.try_emplace(id);
  if (!inserted) --c.document_counts[index_of(it->second.status)];
  it->second.status = status;
  it->second.error = status == DocStatus::kFailed ? std::move(error) : std::string();
  ++c.document_counts[index_of(status)];
}

// Lists are applied in lifecycle order, so an id named twice in one report
// ends in its later state (failed wins over indexed, indexed over running).
void apply_changes(Connector& c, const fb::DocumentChanges* changes) {
  if (changes == nullptr) return;
  auto apply_ids = [&c](const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>* ids,
                        DocStatus status) {
    if (ids == nullptr) return;
    for (const auto* id : *ids) set_document(c, id->str(), status, {});
  };
  apply_ids(changes->pending(), DocStatus::kPending);
  apply_ids(changes->running(), DocStatus::kRunning);
  apply_ids(changes->indexed(), DocStatus::kIndexed);
  if (changes->failed() == nullptr) return;
  for (const auto* f : *changes->failed()) {
    if (f->id() == nullptr) continue;
    set_document(c, f->id()->str(), DocStatus::kFailed,
                 f->error() == nullptr ? std::string() : f->error()->str());
  }
}

void set_next_slot(ConnectorsState& s, Connector& c, int64_t slot_ms) {
  if (c.next_slot_ms != 0) s.slots.erase({c.next_slot_ms, c.id});
  c.next_slot_ms = slot_ms;
  if (slot_ms != 0) s.slots.insert({slot_ms, c.id});
}

void remember_ended_sync(Connector& c, std::string sync_id, std::string how) {
  if (c.ended_syncs.size() >= kEndedSyncsKept) c.ended_syncs.erase(c.ended_syncs.begin());
  c.ended_syncs.push_back(EndedSync{std::move(sync_id), std::move(how)});
}

}  // namespace runledger::connectors::internal

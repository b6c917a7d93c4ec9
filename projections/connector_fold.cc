// The connector fold: evolve(state, event) for every connector-stream event.
// Pure and clock-free: times come from the event (recorded_at_ms, slot_at_ms),
// so replaying the log rebuilds exactly the state the engine held.
#include "projections/connector.h"
#include "projections/connector_internal.h"
#include "projections/event_types.h"
#include "projections/state.h"

namespace runledger::connectors {

using internal::kMsPerS;

namespace {

std::string str(const flatbuffers::String* s) { return s == nullptr ? std::string() : s->str(); }

// `from_ms` plus one interval; 0 (no next slot) when there is no schedule or
// the sum does not fit. The engine never writes such values (the decider
// bounds sync_schedule_s), but replay and verify read forged logs too, and
// signed overflow is undefined behaviour.
int64_t slot_after(int64_t from_ms, int64_t sync_schedule_s) {
  int64_t interval_ms = 0, slot_ms = 0;
  if (sync_schedule_s <= 0 || __builtin_mul_overflow(sync_schedule_s, kMsPerS, &interval_ms) ||
      __builtin_add_overflow(from_ms, interval_ms, &slot_ms)) {
    return 0;
  }
  return slot_ms;
}

void schedule(ConnectorsState& s, Connector& c, int64_t sync_schedule_s, int64_t set_at_ms) {
  c.sync_schedule_s = sync_schedule_s;
  internal::set_next_slot(s, c, slot_after(set_at_ms, sync_schedule_s));
}

// The slot served (or skipped, or missed up to) is done; the next one is one
// interval later.
void advance_past(ConnectorsState& s, Connector& c, int64_t slot_ms) {
  if (c.sync_schedule_s == 0 || slot_ms == 0) return;
  internal::set_next_slot(s, c, slot_after(slot_ms, c.sync_schedule_s));
}

void create(State& s, const std::string& id, const fb::Event& e) {
  const auto* p = e.payload_as_ConnectorCreated();
  auto& conns = s.connectors;
  evict(s, id);  // a re-created id starts afresh
  Connector& c = conns.by_id[id];
  c.id = id;
  c.name = str(p->name());
  c.created_at_ms = e.recorded_at_ms();
  c.updated_at_ms = e.recorded_at_ms();
  c.version = e.stream_version();
  schedule(conns, c, p->sync_schedule_s(), e.recorded_at_ms());
}

void end_sync(Connector& c, const char* how) {
  c.sync_status = SyncStatus::kIdle;
  internal::remember_ended_sync(c, c.sync_id, how);
}

void start_sync(ConnectorsState& s, Connector& c, const fb::SyncStarted& p, int64_t at_ms) {
  c.sync_status = SyncStatus::kRunning;
  c.sync_id = str(p.sync_id());
  c.sync_trigger = str(p.trigger());
  c.sync_started_at_ms = at_ms;
  advance_past(s, c, p.slot_at_ms());
}

// Pending and running documents fail with the sync (docs/domain.md 2.2, steps 2
// and 3); indexed and failed ones keep what they had.
void abort_sync(Connector& c) {
  for (auto& [id, doc] : c.documents) {
    if (doc.status != DocStatus::kPending && doc.status != DocStatus::kRunning) continue;
    --c.document_counts[static_cast<size_t>(doc.status)];
    ++c.document_counts[static_cast<size_t>(DocStatus::kFailed)];
    doc.status = DocStatus::kFailed;
    doc.error = kAbortedDocumentError;
  }
  end_sync(c, "aborted");
}

void update(ConnectorsState& s, Connector& c, const fb::ConnectorUpdated& p, int64_t at_ms) {
  if (p.name() != nullptr && p.name()->size() > 0) c.name = p.name()->str();
  if (p.schedule_changed()) schedule(s, c, p.sync_schedule_s(), at_ms);
}

void change_status(Connector& c, const fb::ConnectorStatusChanged& p) {
  if (auto to = status_from(str(p.to()))) internal::set_status(c, *to);
}

void succeed(Connector& c, const fb::SyncSucceeded& p, int64_t at_ms) {
  internal::apply_changes(c, p.documents());
  internal::set_status(c, Status::kActive);
  c.last_synced_at_ms = at_ms;
  end_sync(c, "succeeded");
}

void fail(Connector& c, const fb::SyncFailed& p) {
  internal::set_status(c, Status::kError);
  c.last_error = str(p.error());
  end_sync(c, "failed");
}

}  // namespace

// Every payload type is listed, so a new event type makes the compiler point
// here; job and hold events never reach this fold (fold.cc dispatches).
void evolve(State& s, const fb::Event& e) {
  using P = fb::Payload;
  std::string id(internal::id_of_stream(str(e.stream())));
  if (e.payload_type() == P::ConnectorCreated) return create(s, id, e);
  auto it = s.connectors.by_id.find(id);
  if (it == s.connectors.by_id.end()) return;
  Connector& c = it->second;
  ConnectorsState& conns = s.connectors;
  int64_t at_ms = e.recorded_at_ms();
  c.version = e.stream_version();
  // An ignored report is on record but changes nothing (docs/domain.md 2.3).
  if (e.payload_type() != P::SyncReportIgnored) c.updated_at_ms = at_ms;
  switch (e.payload_type()) {
    case P::ConnectorUpdated:
      return update(conns, c, *e.payload_as_ConnectorUpdated(), at_ms);
    case P::ConnectorStatusChanged:
      return change_status(c, *e.payload_as_ConnectorStatusChanged());
    case P::SyncStarted:
      return start_sync(conns, c, *e.payload_as_SyncStarted(), at_ms);
    case P::SyncProgressed:
      return internal::apply_changes(c, e.payload_as_SyncProgressed()->documents());
    case P::SyncSucceeded:
      return succeed(c, *e.payload_as_SyncSucceeded(), at_ms);
    case P::SyncFailed:
      return fail(c, *e.payload_as_SyncFailed());
    case P::SyncAborted:
      return abort_sync(c);
    case P::SyncSkipped:
      return advance_past(conns, c, e.payload_as_SyncSkipped()->slot_at_ms());
    case P::SyncLockBroken:
      return end_sync(c, "superseded");  // the SyncStarted after it moves the slot
    case P::ScheduleGap:
      return advance_past(conns, c, e.payload_as_ScheduleGap()->to_ms());
    case P::ConnectorDeletionStarted:
      return internal::set_status(c, Status::kDeleting);
    case P::ConnectorDeleted:
      return evict(s, id);
    case P::SyncReportIgnored:
    case P::ConnectorCreated:  // handled above
    case P::NONE:
      RUNLEDGER_JOB_EVENT_TYPES(RUNLEDGER_EVENT_CASE)
      RUNLEDGER_HOLD_EVENT_TYPES(RUNLEDGER_EVENT_CASE)
      return;
  }
}

}  // namespace runledger::connectors

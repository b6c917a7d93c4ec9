// The connector decider for operator commands (docs/domain.md 2.1, 2.2): create,
// update, delete, start sync, abort sync. Pure: reads the state and the
// command, returns events or a refusal. Input checks come first (422), then
// existence (404), then the 2.1 conditions in the order of its table (409).
#include <fmt/format.h>

#include "projections/connector.h"
#include "projections/connector_commands.h"
#include "projections/connector_internal.h"
#include "projections/limits.h"
#include "projections/state.h"

namespace runledger::connectors {

using internal::find;
using internal::invalid_field;
using internal::not_found;
using internal::refused;

namespace {

std::optional<Decision> check_name(const std::string& name) {
  if (name.empty() || name.size() > kNameBytesMax) {
    return invalid_field("name", fmt::format("name must be 1 to {} bytes", kNameBytesMax));
  }
  return std::nullopt;
}

std::optional<Decision> check_schedule(int64_t sync_schedule_s) {
  if (sync_schedule_s < 0 || sync_schedule_s > kSyncScheduleSMax) {
    return invalid_field(
        "sync_schedule_s",
        fmt::format("sync_schedule_s must be 1 to {} seconds, or null", kSyncScheduleSMax));
  }
  return std::nullopt;
}

std::optional<Decision> check_update(const Update& c) {
  if (c.status && *c.status != to_string(Status::kActive) &&
      *c.status != to_string(Status::kPaused)) {
    // error and deleting are the engine's to set, never an operator's.
    return invalid_field("status", "status may be set to active or paused only");
  }
  if (c.name) {
    if (auto bad = check_name(*c.name)) return bad;
  }
  if (c.sync_schedule_s) return check_schedule(*c.sync_schedule_s);
  return std::nullopt;
}

// The connector as it stands once ConnectorDeletionStarted is folded: the
// reply to a delete shows it, although the fold erases it right after.
Connector as_deleting(const Connector& c, const Context& ctx) {
  Connector out = c;
  out.status = Status::kDeleting;
  out.last_error.clear();
  out.updated_at_ms = ctx.now_ms;
  out.version = c.version + 1;
  return out;
}

}  // namespace

Decision decide(const State& s, const Create& c, const Context&) {
  if (c.id.empty() || c.id.size() > limits::kIdBytesMax) {
    return invalid_field("id", fmt::format("id must be 1 to {} characters", limits::kIdBytesMax));
  }
  if (auto bad = check_name(c.name)) return std::move(*bad);
  if (auto bad = check_schedule(c.sync_schedule_s)) return std::move(*bad);
  if (const Connector* existing = find(s, c.id)) {
    // A create repeated with the same body (a client retrying a request it
    // saw no answer to) gets the connector, as a repeated enqueue gets the
    // job; only a different body is a conflict. The comparison is with the
    // connector as it is now, so it also holds after a PATCH.
    if (existing->name != c.name || existing->sync_schedule_s != c.sync_schedule_s) {
      return Decision::reject(
          RejectionCode::kDuplicateId,
          fmt::format("Connector {} already exists with a different body", c.id), {{"id", c.id}});
    }
    Decision d;
    d.body = {{"existing", true}};
    return d;
  }
  Decision d;
  fb::ConnectorCreatedT created;
  created.name = c.name;
  created.sync_schedule_s = c.sync_schedule_s;
  d.emit(connector_stream(c.id), std::move(created));
  return d;
}

// Setting a field to the value it has is no change and records nothing, so a
// repeated PATCH neither adds events nor moves the schedule's next slot.
Decision decide(const State& s, const Update& c, const Context&) {
  if (auto bad = check_update(c)) return std::move(*bad);
  const Connector* conn = find(s, c.id);
  if (conn == nullptr) return not_found(c.id);
  if (auto refusal = refused(*conn, kCmdUpdate)) return std::move(*refusal);
  Decision d;
  if (c.status && *c.status != to_string(conn->status)) {
    fb::ConnectorStatusChangedT changed;
    changed.from = to_string(conn->status);
    changed.to = *c.status;
    d.emit(connector_stream(c.id), std::move(changed));
  }
  bool name_changed = c.name && *c.name != conn->name;
  bool schedule_changed = c.sync_schedule_s && *c.sync_schedule_s != conn->sync_schedule_s;
  if (name_changed || schedule_changed) {
    fb::ConnectorUpdatedT updated;
    if (name_changed) updated.name = *c.name;
    updated.schedule_changed = schedule_changed;
    if (schedule_changed) updated.sync_schedule_s = *c.sync_schedule_s;
    d.emit(connector_stream(c.id), std::move(updated));
  }
  return d;
}

Decision decide(const State& s, const Delete& c, const Context& ctx) {
  const Connector* conn = find(s, c.id);
  if (conn == nullptr) return not_found(c.id);
  if (auto refusal = refused(*conn, kCmdDelete)) return std::move(*refusal);
  Decision d;
  d.emit(connector_stream(c.id), fb::ConnectorDeletionStartedT{});
  fb::ConnectorDeletedT deleted;
  deleted.documents_removed = static_cast<int64_t>(conn->documents.size());
  d.emit(connector_stream(c.id), deleted);
  d.body = view(as_deleting(*conn, ctx));
  return d;
}

Decision decide(const State& s, const StartSync& c, const Context&) {
  if (c.sync_id.empty() || c.sync_id.size() > kSyncIdBytesMax) {
    return invalid_field("sync_id",
                         fmt::format("sync_id must be 1 to {} characters", kSyncIdBytesMax));
  }
  const Connector* conn = find(s, c.id);
  if (conn == nullptr) return not_found(c.id);
  if (auto refusal = refused(*conn, kCmdSync)) return std::move(*refusal);
  Decision d;
  fb::SyncStartedT started;
  started.sync_id = c.sync_id;
  started.trigger = "manual";
  d.emit(connector_stream(c.id), std::move(started));
  return d;
}

// One event however many documents: the fold marks them failed, so an abort
// of a 100k-document sync is one small record in the log.
Decision decide(const State& s, const AbortSync& c, const Context&) {
  const Connector* conn = find(s, c.id);
  if (conn == nullptr) return not_found(c.id);
  if (auto refusal = refused(*conn, kCmdAbort)) return std::move(*refusal);
  fb::SyncAbortedT aborted;
  aborted.sync_id = conn->sync_id;
  aborted.pending_failed = conn->document_counts[static_cast<size_t>(DocStatus::kPending)];
  aborted.running_failed = conn->document_counts[static_cast<size_t>(DocStatus::kRunning)];
  Decision d;
  d.emit(connector_stream(c.id), std::move(aborted));
  return d;
}

}  // namespace runledger::connectors

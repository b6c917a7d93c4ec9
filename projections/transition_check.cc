// check_transition(): the dispatch on the event type, and the connector
// (docs/domain.md section 2) and hold (section 3) rules. The job rules are in
// transition_check_job.cc.
#include "projections/transition_check.h"

#include <fmt/format.h>

#include "projections/connector_commands.h"
#include "projections/event_types.h"
#include "projections/hold_commands.h"
#include "projections/transition_check_internal.h"

namespace runledger {

namespace transition_check {

Status forbidden(const fb::Event& e, std::string_view why) {
  std::string stream = e.stream() == nullptr ? std::string() : e.stream()->str();
  return Status::Corruption(
      fmt::format("{} on {}: {}", fb::EnumNamePayload(e.payload_type()), stream, why), e.seq());
}

bool id_in_stream(const fb::Event& e, StreamKind kind, std::string_view* id) {
  *id = stream_id(e.stream() == nullptr ? "" : e.stream()->string_view(), kind);
  return !id->empty();
}

namespace {

using connectors::Connector;
using ConnectorStatus = connectors::Status;
using P = fb::Payload;

std::string text(const flatbuffers::String* s) { return s == nullptr ? std::string() : s->str(); }

// ---- connectors ----

Status need_running_sync(const fb::Event& e, const Connector& c, const std::string& sync_id) {
  if (!c.running()) return forbidden(e, "no sync is running");
  if (c.sync_id != sync_id) {
    return forbidden(e, fmt::format("sync {} is not the running sync {}", sync_id, c.sync_id));
  }
  return Status::Ok();
}

// An event that a command of the connector's table records (update, sync,
// delete) needs the table to accept that command in the state before it.
Status need_accepted(const fb::Event& e, const Connector& c, std::string_view command) {
  const connectors::Refusal* r = connectors::refusal_of(c, command);
  if (r == nullptr) return Status::Ok();
  return forbidden(e, fmt::format("the connector accepts no {} now: {}", command, r->message));
}

Status check_status_changed(const fb::Event& e, const Connector& c) {
  const auto* ev = e.payload_as_ConnectorStatusChanged();
  if (Status s = need_accepted(e, c, connectors::kCmdUpdate); !s.ok()) return s;
  const std::string from = text(ev->from()), to = text(ev->to());
  if (from != connectors::to_string(c.status)) {
    return forbidden(e, fmt::format("changes status from {}, the connector is {}", from,
                                    connectors::to_string(c.status)));
  }
  // error and deleting are set by the sync and delete events, never by an update.
  if (to != connectors::to_string(ConnectorStatus::kActive) &&
      to != connectors::to_string(ConnectorStatus::kPaused)) {
    return forbidden(e, "status may be changed to active or paused only, not " + to);
  }
  if (from == to) return forbidden(e, "status " + to + " does not change");
  return Status::Ok();
}

Status check_report_ignored(const fb::Event& e, const Connector& c) {
  const std::string sync_id = text(e.payload_as_SyncReportIgnored()->sync_id());
  // Only a report from a sync that is not the running one is ignored.
  if (c.running() && c.sync_id == sync_id) {
    return forbidden(e, "sync " + sync_id + " is the running sync: its report counts");
  }
  return Status::Ok();
}

Status check_skipped(const fb::Event& e, const Connector& c) {
  const std::string reason = text(e.payload_as_SyncSkipped()->reason());
  if (c.sync_schedule_s == 0) return forbidden(e, "the connector has no schedule");
  bool holds = (reason == "paused" && c.status == ConnectorStatus::kPaused) ||
               (reason == "deleting" && c.status == ConnectorStatus::kDeleting) ||
               (reason == "sync_running" && c.running());
  if (!holds) {
    return forbidden(
        e, fmt::format("skip reason {} does not hold: the connector is {} and {}", reason,
                       connectors::to_string(c.status), connectors::to_string(c.sync_status)));
  }
  return Status::Ok();
}

// The decider bounds the schedule; a value outside it was not written by it.
Status check_schedule(const fb::Event& e, int64_t sync_schedule_s) {
  if (sync_schedule_s < 0 || sync_schedule_s > connectors::kSyncScheduleSMax) {
    return forbidden(e, "sync_schedule_s " + std::to_string(sync_schedule_s) + " is outside 0.." +
                            std::to_string(connectors::kSyncScheduleSMax));
  }
  return Status::Ok();
}

Status check_on_connector(const fb::Event& e, const Connector& c) {
  switch (e.payload_type()) {
    case P::ConnectorUpdated:
      if (Status st = check_schedule(e, e.payload_as_ConnectorUpdated()->sync_schedule_s());
          !st.ok()) {
        return st;
      }
      return need_accepted(e, c, connectors::kCmdUpdate);
    case P::ConnectorStatusChanged:
      return check_status_changed(e, c);
    case P::SyncStarted:  // by a command, or at a schedule slot by the same rule
      return need_accepted(e, c, connectors::kCmdSync);
    case P::SyncProgressed:
      return need_running_sync(e, c, text(e.payload_as_SyncProgressed()->sync_id()));
    case P::SyncSucceeded:
      return need_running_sync(e, c, text(e.payload_as_SyncSucceeded()->sync_id()));
    case P::SyncFailed:
      return need_running_sync(e, c, text(e.payload_as_SyncFailed()->sync_id()));
    case P::SyncAborted:
      return need_running_sync(e, c, text(e.payload_as_SyncAborted()->sync_id()));
    case P::SyncLockBroken:
      return need_running_sync(e, c, text(e.payload_as_SyncLockBroken()->sync_id()));
    case P::SyncReportIgnored:
      return check_report_ignored(e, c);
    case P::SyncSkipped:
      return check_skipped(e, c);
    case P::ScheduleGap:
      if (c.sync_schedule_s == 0) return forbidden(e, "the connector has no schedule");
      return Status::Ok();
    case P::ConnectorDeletionStarted:
      return need_accepted(e, c, connectors::kCmdDelete);
    case P::ConnectorDeleted:
      if (c.status != ConnectorStatus::kDeleting) {
        return forbidden(e, "the connector is " + std::string(connectors::to_string(c.status)) +
                                ", not deleting");
      }
      return Status::Ok();
    case P::ConnectorCreated:  // checked before the connector is looked up
    case P::NONE:
      RUNLEDGER_JOB_EVENT_TYPES(RUNLEDGER_EVENT_CASE)
      RUNLEDGER_HOLD_EVENT_TYPES(RUNLEDGER_EVENT_CASE)
      break;
  }
  return forbidden(e, "not a connector event");
}

Status check_connector_event(const State& s, const fb::Event& e) {
  std::string_view id;
  if (!id_in_stream(e, StreamKind::kConnector, &id)) {
    return forbidden(e, "a connector event outside a connector stream");
  }
  auto it = s.connectors.by_id.find(std::string(id));
  const Connector* c = it == s.connectors.by_id.end() ? nullptr : &it->second;
  if (e.payload_type() == P::ConnectorCreated) {
    if (Status st = check_schedule(e, e.payload_as_ConnectorCreated()->sync_schedule_s());
        !st.ok()) {
      return st;
    }
    // A deleted connector is gone, so its id may be created again.
    return c == nullptr ? Status::Ok() : forbidden(e, "the connector already exists");
  }
  if (c == nullptr) return forbidden(e, "the connector does not exist");
  return check_on_connector(e, *c);
}

// ---- holds ----

Status check_hold_placed(const State& s, const fb::Event& e, const holds::Hold* existing) {
  const auto* ev = e.payload_as_HoldPlaced();
  if (existing != nullptr) return forbidden(e, "the hold already exists");
  const std::string kind = text(ev->kind());
  if (kind != holds::kExecutionStateUnknown && kind != holds::kResultUnknown) {
    return forbidden(e, "unknown hold kind " + kind);
  }
  if (text(ev->target()).empty()) return forbidden(e, "the hold has no target");
  const std::string job = text(ev->job());
  if (job.empty()) return Status::Ok();
  auto it = s.jobs.by_id.find(job);
  if (it == s.jobs.by_id.end()) return forbidden(e, "names job " + job + ", which does not exist");
  if (it->second.target != text(ev->target())) {
    return forbidden(e, fmt::format("job {} changes target {}, not {}", job, it->second.target,
                                    text(ev->target())));
  }
  return Status::Ok();
}

Status check_hold_released(const fb::Event& e, const holds::Hold* h) {
  if (h == nullptr) return forbidden(e, "the hold does not exist");
  if (!holds::accepts(*h, holds::kCmdRelease)) {
    return forbidden(e, "the hold is already released");
  }
  const std::string outcome = text(e.payload_as_HoldReleased()->outcome());
  if (!outcome.empty() && outcome != "SUCCEEDED" && outcome != "FAILED") {
    return forbidden(e, "outcome " + outcome + " is neither SUCCEEDED nor FAILED");
  }
  return Status::Ok();
}

Status check_hold_event(const State& s, const fb::Event& e) {
  std::string_view id;
  if (!id_in_stream(e, StreamKind::kHold, &id))
    return forbidden(e, "a hold event outside a hold stream");
  auto it = s.holds.by_id.find(std::string(id));
  const holds::Hold* h = it == s.holds.by_id.end() ? nullptr : &it->second;
  if (e.payload_type() == P::HoldPlaced) return check_hold_placed(s, e, h);
  return check_hold_released(e, h);
}

}  // namespace
}  // namespace transition_check

Status check_transition(const State& before, const fb::Event& e) {
  using transition_check::check_connector_event;
  using transition_check::check_hold_event;
  using transition_check::check_job_event;
  const std::optional<StreamKind> kind = event_stream_kind(e.payload_type());
  if (kind.has_value()) {
    switch (*kind) {
      case StreamKind::kJob:
        return check_job_event(before, e);
      case StreamKind::kConnector:
        return check_connector_event(before, e);
      case StreamKind::kHold:
        return check_hold_event(before, e);
    }
  }
  return transition_check::forbidden(e, "an event without a payload");
}

}  // namespace runledger

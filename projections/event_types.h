// The event types of the log, each under the entity whose stream it is
// written to (docs/domain.md, docs/architecture.md "Where a rule is
// written"). This is the one list: the switches over fb::Payload take their
// case labels from it, so each stays exhaustive under -Wswitch-enum without
// spelling the other entities' types again, and a type added to the schema
// (events/event.fbs) fails the build until it is listed here.
//
//   switch (e.payload_type()) {
//     case P::SyncStarted: ...
//     RUNLEDGER_JOB_EVENT_TYPES(RUNLEDGER_EVENT_CASE)
//     RUNLEDGER_HOLD_EVENT_TYPES(RUNLEDGER_EVENT_CASE)
//     case P::NONE:
//       break;
//   }
#pragma once

#include <cstddef>
#include <iterator>
#include <optional>

#include "events/event_generated.h"
#include "projections/stream_name.h"

// X(Type) for each type of a job's stream, in the schema's order.
#define RUNLEDGER_JOB_EVENT_TYPES(X) \
  X(JobEnqueued)                     \
  X(JobLeased)                       \
  X(LeaseRenewed)                    \
  X(LeaseReleased)                   \
  X(LeaseExpired)                    \
  X(JobStarted)                      \
  X(StepStarted)                     \
  X(StepSucceeded)                   \
  X(StepFailed)                      \
  X(CancelRequested)                 \
  X(AttemptCancelled)                \
  X(AttemptSucceeded)                \
  X(AttemptFailed)                   \
  X(RetryScheduled)                  \
  X(RerunRequested)                  \
  X(AttemptStale)                    \
  X(ExecutionReattached)             \
  X(AttemptResolved)                 \
  X(AttemptYielded)

// X(Type) for each type of a connector's stream.
#define RUNLEDGER_CONNECTOR_EVENT_TYPES(X) \
  X(ConnectorCreated)                      \
  X(ConnectorUpdated)                      \
  X(ConnectorStatusChanged)                \
  X(SyncStarted)                           \
  X(SyncProgressed)                        \
  X(SyncSucceeded)                         \
  X(SyncFailed)                            \
  X(SyncAborted)                           \
  X(SyncReportIgnored)                     \
  X(SyncSkipped)                           \
  X(SyncLockBroken)                        \
  X(ScheduleGap)                           \
  X(ConnectorDeletionStarted)              \
  X(ConnectorDeleted)

// X(Type) for each type of a hold's stream.
#define RUNLEDGER_HOLD_EVENT_TYPES(X) \
  X(HoldPlaced)                       \
  X(HoldReleased)

// The case label of one type, for the lists above.
#define RUNLEDGER_EVENT_CASE(Type) case ::runledger::fb::Payload::Type:

namespace runledger {

// The kind of stream an event of `type` belongs to; nullopt for NONE.
constexpr std::optional<StreamKind> event_stream_kind(fb::Payload type) {
  switch (type) {
    RUNLEDGER_JOB_EVENT_TYPES(RUNLEDGER_EVENT_CASE)
    return StreamKind::kJob;
    RUNLEDGER_CONNECTOR_EVENT_TYPES(RUNLEDGER_EVENT_CASE)
    return StreamKind::kConnector;
    RUNLEDGER_HOLD_EVENT_TYPES(RUNLEDGER_EVENT_CASE)
    return StreamKind::kHold;
    case fb::Payload::NONE:
      break;
  }
  return std::nullopt;
}

// Every event type, by entity, in the lists' order.
#define RUNLEDGER_EVENT_VALUE(Type) ::runledger::fb::Payload::Type,
inline constexpr fb::Payload kEventTypes[] = {
    RUNLEDGER_JOB_EVENT_TYPES(RUNLEDGER_EVENT_VALUE)
        RUNLEDGER_CONNECTOR_EVENT_TYPES(RUNLEDGER_EVENT_VALUE)
            RUNLEDGER_HOLD_EVENT_TYPES(RUNLEDGER_EVENT_VALUE)};
#undef RUNLEDGER_EVENT_VALUE

// Each type is listed once: a type listed twice is a duplicate case label in
// event_stream_kind(), and one left out is a -Wswitch-enum error there and
// fails this count.
static_assert(std::size(kEventTypes) == static_cast<size_t>(fb::Payload::MAX),
              "every event type of the schema is listed under exactly one entity");

}  // namespace runledger

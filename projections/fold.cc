#include "projections/state.h"

namespace runledger {

void evolve(State& s, const fb::Event& e) {
  using P = fb::Payload;
  switch (e.payload_type()) {
    case P::JobEnqueued:
    case P::JobLeased:
    case P::LeaseRenewed:
    case P::LeaseReleased:
    case P::LeaseExpired:
    case P::JobStarted:
    case P::StepStarted:
    case P::StepSucceeded:
    case P::StepFailed:
    case P::CancelRequested:
    case P::AttemptCancelled:
    case P::AttemptSucceeded:
    case P::AttemptFailed:
    case P::RetryScheduled:
    case P::RerunRequested:
    case P::AttemptStale:
    case P::ExecutionReattached:
    case P::AttemptResolved:
    case P::AttemptYielded:
      jobs::evolve(s, e);
      break;
    case P::ConnectorCreated:
    case P::ConnectorUpdated:
    case P::ConnectorStatusChanged:
    case P::SyncStarted:
    case P::SyncProgressed:
    case P::SyncSucceeded:
    case P::SyncFailed:
    case P::SyncAborted:
    case P::SyncReportIgnored:
    case P::SyncSkipped:
    case P::SyncLockBroken:
    case P::ScheduleGap:
    case P::ConnectorDeletionStarted:
    case P::ConnectorDeleted:
      connectors::evolve(s, e);
      break;
    case P::HoldPlaced:
    case P::HoldReleased:
      holds::evolve(s, e);
      break;
    case P::NONE:
      break;
  }
  s.last_seq = e.seq();
}

}  // namespace runledger

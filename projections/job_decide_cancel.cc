// Deciders of cancellation (docs/domain.md 1.6): an operator's cancel, and the
// worker's acknowledgement of it. A QUEUED attempt is cancelled at once; a
// LEASED or RUNNING one only records the request, which the worker honours at
// its next boundary (start, step, ack, release) or the lease expiry does.
#include <fmt/format.h>

#include "projections/job_decide_common.h"

namespace runledger::jobs {

Decision decide(const State& s, const Cancel& c, const Context& /*ctx*/) {
  const Job* j = detail::find_job(s, c.job_id);
  if (j == nullptr) return detail::not_found(c.job_id);
  if (c.reason.size() > kReasonBytesMax) {
    return detail::invalid_field("reason",
                                 fmt::format("reason is longer than {} bytes", kReasonBytesMax));
  }
  const Attempt& a = j->latest();
  Decision d;
  switch (a.state) {
    case AttemptState::kQueued: {
      fb::AttemptCancelledT ev = detail::cancellation(*j, "queued", {});
      ev.reason = c.reason;
      d.emit(job_stream(j->id), std::move(ev));
      return d;
    }
    case AttemptState::kLeased:
    case AttemptState::kRunning: {
      // A second request changes nothing: the first reason and actor stand.
      if (a.cancel_requested) return d;
      fb::CancelRequestedT ev;
      ev.attempt = a.number;
      ev.reason = c.reason;
      d.emit(job_stream(j->id), std::move(ev));
      return d;
    }
    case AttemptState::kStale:
      // Nobody can vouch that the work stopped; only a resolution ends it.
      return detail::refused(*j, detail::kCmdCancel, "its outcome must be resolved first");
    case AttemptState::kSucceeded:
    case AttemptState::kFailed:
    case AttemptState::kCancelled:
    case AttemptState::kYielded:
      return detail::refused(*j, detail::kCmdCancel);
  }
  return d;
}

Decision decide(const State& s, const CancelAck& c, const Context& /*ctx*/) {
  Decision d;
  const Job* j = detail::worker_gate(s, c.job_id, detail::kCmdCancelAck, c.lease_token, &d);
  if (j == nullptr) return d;
  if (!j->latest().cancel_requested) {
    return detail::refused(*j, detail::kCmdCancelAck, "no cancel was requested");
  }
  d.emit(job_stream(j->id), detail::cancellation(*j, "ack", j->latest().worker));
  return d;
}

}  // namespace runledger::jobs

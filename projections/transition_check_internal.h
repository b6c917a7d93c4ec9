// The per-entity halves of check_transition() (projections/transition_check.h):
// the job rules (transition_check_job.cc) and the connector and hold rules
// (transition_check.cc), with the refusal they share. Internal to the checker.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "events/event_generated.h"
#include "projections/state.h"
#include "projections/stream_name.h"

namespace runledger::transition_check {

// A refusal naming the event, its stream and why: kCorruption at its seq.
Status forbidden(const fb::Event& e, std::string_view why);

// Sets *id to what follows `prefix` in the event's stream; false when the
// stream does not start with it.
bool id_in_stream(const fb::Event& e, StreamKind kind, std::string_view* id);

// `e` is a job-stream event (JobEnqueued .. AttemptResolved, AttemptYielded).
Status check_job_event(const State& s, const fb::Event& e);

}  // namespace runledger::transition_check

// Command: every write the engine takes, as one closed variant. Adding a
// command means adding it here; the compiler then points at every visitor.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "projections/decision.h"
#include "projections/state.h"

namespace runledger {

using Command = std::variant<
    // jobs
    jobs::Enqueue, jobs::Claim, jobs::Heartbeat, jobs::Release, jobs::Start, jobs::StepStart,
    jobs::StepDone, jobs::StepFail, jobs::Cancel, jobs::CancelAck, jobs::OutcomeUnknown,
    jobs::Reattach, jobs::Rerun, jobs::Yield, jobs::ExpireLeases,
    // connectors
    connectors::Create, connectors::Update, connectors::Delete, connectors::StartSync,
    connectors::AbortSync, connectors::ReportProgress, connectors::ReportSucceeded,
    connectors::ReportFailed, connectors::RunSchedule, connectors::RecordScheduleGaps,
    // holds
    holds::Place, holds::ReleaseHold>;

// Pure: dispatches to the model's decider.
Decision decide(const State& s, const Command& c, const Context& ctx);

// A stable name for metrics and logs, e.g. "job.claim".
const char* command_name(const Command& c);

// Streams the command names explicitly: the engine loads those entities
// from the log first when they have left memory (finished jobs, released
// holds), so the decider sees them.
std::vector<std::string> streams_named(const Command& c);

}  // namespace runledger

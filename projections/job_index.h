// The job indexes of JobsState (ready queue, target holders, lease expiries,
// counts by state) derive from a job's latest attempt alone. Every change to
// a job goes: unindex(old) -> change -> index(new), so the indexes stay exact
// whatever the change was. Internal to the job model.
#pragma once

#include "projections/job.h"

namespace runledger::jobs::detail {

void index(JobsState& js, const Job& j);
void unindex(JobsState& js, const Job& j);

}  // namespace runledger::jobs::detail

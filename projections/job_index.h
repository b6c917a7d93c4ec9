// The job indexes of JobsState (ready queue, target holders, lease expiries,
// counts by state) derive from a job's latest attempt alone. Every change to
// a job goes: unindex(old) -> change -> index(new), so the indexes stay exact
// whatever the change was; a change that leaves the indexed fields as they
// were may skip both. Internal to the job model.
#pragma once

#include "projections/job.h"

namespace runledger::jobs::detail {

// What a job's index entries derive from besides its id, target, priority
// and enqueue_seq (fixed at enqueue): its latest attempt's state and expiry.
struct IndexedFields {
  bool indexed = false;  // the job has an attempt
  AttemptState state = AttemptState::kQueued;
  int64_t lease_expires_at_ms = 0;
  bool operator==(const IndexedFields&) const = default;
};
IndexedFields indexed_fields(const Job& j);

void index(JobsState& js, const Job& j, const IndexedFields& f);
void unindex(JobsState& js, const Job& j, const IndexedFields& f);
inline void index(JobsState& js, const Job& j) { index(js, j, indexed_fields(j)); }
inline void unindex(JobsState& js, const Job& j) { unindex(js, j, indexed_fields(j)); }

}  // namespace runledger::jobs::detail

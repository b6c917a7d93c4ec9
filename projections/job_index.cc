// Index maintenance of JobsState, and the operations that move whole jobs in
// and out of memory (adopt, evict). See job_index.h.
#include "projections/job_index.h"

#include "projections/state.h"

namespace runledger::jobs {

namespace detail {

namespace {

ReadyKey ready_key(const Job& j) { return ReadyKey{j.priority, j.enqueue_seq, j.id}; }

// True when the attempt's state takes the target's lock and runs a lease.
bool holds_target(AttemptState s) {
  switch (s) {
    case AttemptState::kLeased:
    case AttemptState::kRunning:
      return true;
    case AttemptState::kQueued:
    case AttemptState::kStale:
    case AttemptState::kSucceeded:
    case AttemptState::kFailed:
    case AttemptState::kCancelled:
    case AttemptState::kYielded:
      return false;
  }
  return false;
}

}  // namespace

IndexedFields indexed_fields(const Job& j) {
  if (j.attempts.empty()) return {};
  return {true, j.latest().state, j.latest().lease_expires_at_ms};
}

void index(JobsState& js, const Job& j, const IndexedFields& f) {
  if (!f.indexed) return;
  ++js.count_by_state[to_string(f.state)];
  if (f.state == AttemptState::kQueued) js.ready.insert(ready_key(j));
  if (holds_target(f.state)) {
    js.holder[j.target] = j.id;
    if (f.lease_expires_at_ms != 0) js.expiries.emplace(f.lease_expires_at_ms, j.id);
  }
}

void unindex(JobsState& js, const Job& j, const IndexedFields& f) {
  if (!f.indexed) return;
  size_t& count = js.count_by_state[to_string(f.state)];
  if (count > 0) --count;
  if (f.state == AttemptState::kQueued) js.ready.erase(ready_key(j));
  if (holds_target(f.state)) {
    auto it = js.holder.find(j.target);
    if (it != js.holder.end() && it->second == j.id) js.holder.erase(it);
    js.expiries.erase({f.lease_expires_at_ms, j.id});
  }
}

}  // namespace detail

int64_t next_due_ms(const State& s) {
  return s.jobs.expiries.empty() ? 0 : s.jobs.expiries.begin()->first;
}

bool finished(const Job& j) { return !j.attempts.empty() && is_terminal(j.latest().state); }

void adopt(State& s, Job job) {
  auto it = s.jobs.by_id.find(job.id);
  if (it != s.jobs.by_id.end()) {
    detail::unindex(s.jobs, it->second);
    it->second = std::move(job);
  } else {
    it = s.jobs.by_id.emplace(job.id, std::move(job)).first;
  }
  detail::index(s.jobs, it->second);
}

void evict(State& s, const std::string& job_id) {
  auto it = s.jobs.by_id.find(job_id);
  // A live job must stay: its indexes are what claims and expiries work from.
  if (it == s.jobs.by_id.end() || !finished(it->second)) return;
  detail::unindex(s.jobs, it->second);
  s.jobs.by_id.erase(it);
}

}  // namespace runledger::jobs

// InvariantChecker: see sim_invariants.h. Every recount here is written
// from the entities alone, independently of the projection's index code.
#include "tests/engine/sim_invariants.h"

#include <set>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/engine/state_digest.h"

namespace runledger::testing {
namespace {

using jobs::AttemptState;
using jobs::StepState;
using nlohmann::json;

std::string attempt_name(const jobs::Job& j, const jobs::Attempt& a) {
  return "job " + j.id + " attempt " + std::to_string(a.number) + " (" + jobs::to_string(a.state) +
         ")";
}

bool takes_target(AttemptState s) {
  return s == AttemptState::kLeased || s == AttemptState::kRunning;
}

// What may not change once an attempt is terminal.
Hash terminal_hash(const jobs::Attempt& a) {
  json steps = json::array();
  for (const auto& st : a.steps) {
    steps.push_back({st.name, jobs::to_string(st.state), st.started_at_ms, st.finished_at_ms,
                     st.output, st.error, st.reused_from});
  }
  json part = {{"state", jobs::to_string(a.state)},
               {"finished_at_ms", a.finished_at_ms},
               {"started_at_ms", a.started_at_ms},
               {"error", a.error},
               {"cancel_reason", a.cancel_reason},
               {"cancel_requested", a.cancel_requested},
               {"steps", steps},
               {"worker", a.worker},
               {"execution_handle", a.execution_handle},
               {"last_completed_step", a.last_completed_step},
               {"cleanup_needed", a.cleanup_needed}};
  return sha256(part.dump());
}

// "stale hold": a STALE attempt is blocked from automatic re-execution only
// through its hold, so the hold must exist, be open and name the attempt.
std::string stale_hold_violation(const State& s, const jobs::Job& j, const jobs::Attempt& a) {
  if (a.state != AttemptState::kStale) return "";
  auto it = s.holds.by_id.find(a.stale_hold_id);
  if (a.stale_hold_id.empty() || it == s.holds.by_id.end()) {
    return "stale hold: " + attempt_name(j, a) + " has no hold in memory ('" + a.stale_hold_id +
           "'); ";
  }
  const holds::Hold& h = it->second;
  if (h.released) return "stale hold: " + attempt_name(j, a) + " but hold " + h.id + " released; ";
  if (h.target != j.target || h.job != j.id || h.attempt != a.number) {
    return "stale hold: hold " + h.id + " of " + attempt_name(j, a) + " names " + h.target + "/" +
           h.job + "#" + std::to_string(h.attempt) + "; ";
  }
  return "";
}

// "attempt shape": the fields a state implies.
std::string attempt_shape_violation(const jobs::Job& j, const jobs::Attempt& a, bool latest) {
  std::string out;
  if (!latest && !jobs::is_terminal(a.state)) {
    out += "attempt shape: " + attempt_name(j, a) + " is not the latest yet not terminal; ";
  }
  if (takes_target(a.state) && (a.lease_token_sha256.empty() || a.lease_expires_at_ms == 0)) {
    out += "attempt shape: " + attempt_name(j, a) + " has no lease; ";
  }
  int running_steps = 0;
  for (const auto& st : a.steps) {
    running_steps += st.state == StepState::kRunning;
    bool untouched = st.state == StepState::kPending || st.state == StepState::kReused;
    if ((a.state == AttemptState::kQueued || a.state == AttemptState::kLeased) && !untouched) {
      out += "attempt shape: " + attempt_name(j, a) + " has step " + st.name + " " +
             jobs::to_string(st.state) + " before it started; ";
    }
  }
  if (running_steps > 1) out += "attempt shape: " + attempt_name(j, a) + " runs two steps; ";
  if (a.steps.size() != j.plan.size()) {
    out += "attempt shape: " + attempt_name(j, a) + " steps differ from the plan; ";
  }
  return out;
}

// "job indexes": the ready queue, target holders, lease expiries and counts
// recounted from the jobs' latest attempts.
std::string job_index_violation(const State& s) {
  std::set<jobs::ReadyKey> ready;
  std::map<std::string, std::string> holder;
  std::set<std::pair<int64_t, std::string>> expiries;
  std::map<std::string, size_t> counts = jobs::zero_counts_by_state();
  for (const auto& [id, j] : s.jobs.by_id) {
    const jobs::Attempt& a = j.latest();
    ++counts[jobs::to_string(a.state)];
    if (a.state == AttemptState::kQueued) ready.insert({j.priority, j.enqueue_seq, id});
    if (takes_target(a.state)) {
      holder[j.target] = id;
      expiries.emplace(a.lease_expires_at_ms, id);
    }
  }
  std::string out;
  if (ready.size() != s.jobs.ready.size() ||
      !std::equal(ready.begin(), ready.end(), s.jobs.ready.begin(),
                  [](const jobs::ReadyKey& x, const jobs::ReadyKey& y) {
                    return x.job_id == y.job_id && x.priority == y.priority &&
                           x.enqueue_seq == y.enqueue_seq;
                  })) {
    out += "job indexes: the ready queue is not the QUEUED jobs; ";
  }
  if (holder != std::map<std::string, std::string>(s.jobs.holder.begin(), s.jobs.holder.end())) {
    out += "job indexes: the holder index is not the LEASED/RUNNING jobs; ";
  }
  if (expiries != s.jobs.expiries) out += "job indexes: the expiry index is not the open leases; ";
  if (counts != s.jobs.count_by_state) {
    out += "job indexes: count_by_state " + json(s.jobs.count_by_state).dump() +
           " but a recount gives " + json(counts).dump() + "; ";
  }
  return out;
}

// "hold indexes": open holds by target and kind, recounted.
std::string hold_index_violation(const State& s) {
  std::map<std::string, std::set<std::string>> blocking, recovery;
  std::map<std::string, size_t> by_kind;
  for (const auto& [id, h] : s.holds.by_id) {
    if (h.released) continue;
    ++by_kind[h.kind];
    (h.kind == holds::kExecutionStateUnknown ? blocking : recovery)[h.target].insert(id);
  }
  auto without_empty = [](std::map<std::string, std::set<std::string>> m) {
    std::erase_if(m, [](const auto& kv) { return kv.second.empty(); });
    return m;
  };
  std::string out;
  if (blocking != without_empty(s.holds.blocking_by_target)) {
    out += "hold indexes: blocking_by_target is not the open EXECUTION_STATE_UNKNOWN holds; ";
  }
  if (recovery != without_empty(s.holds.recovery_by_target)) {
    out += "hold indexes: recovery_by_target is not the open RESULT_UNKNOWN holds; ";
  }
  if (by_kind != s.holds.open_by_kind) out += "hold indexes: open_by_kind is not a recount; ";
  return out;
}

size_t code_points(std::string_view text) {
  size_t n = 0;
  for (unsigned char ch : text) n += (ch & 0xC0) != 0x80;
  return n;
}

// "connector fields": docs/domain.md section 2's field rules.
std::string connector_violation(const State& s, const connectors::Connector& c) {
  using connectors::Status;
  std::string out;
  std::string who = "connector fields: connector " + c.id + " ";
  if (c.status != Status::kError && !c.last_error.empty()) {
    out += who + "is " + connectors::to_string(c.status) + " with a last_error; ";
  }
  if (code_points(c.last_error) > connectors::kLastErrorCodePointsMax) {
    out += who + "keeps a last_error longer than 500 code points; ";
  }
  if (c.status == Status::kDeleting) out += who + "is still in memory while deleting; ";
  if (c.running() && (c.sync_id.empty() || c.sync_started_at_ms == 0)) {
    out += who + "is running without a current sync; ";
  }
  std::array<int64_t, 4> counts{};
  for (const auto& [id, d] : c.documents) ++counts[static_cast<size_t>(d.status)];
  if (counts != c.document_counts) out += who + "document counts differ from its documents; ";
  bool slotted = s.connectors.slots.count({c.next_slot_ms, c.id}) > 0;
  if ((c.next_slot_ms != 0) != slotted || (c.sync_schedule_s == 0 && c.next_slot_ms != 0)) {
    out += who + "schedule slot and slot index disagree; ";
  }
  return out;
}

}  // namespace

std::string InvariantChecker::attempts_never_change(const State& s) {
  std::string out;
  for (const auto& [id, j] : s.jobs.by_id) {
    int& seen = attempts_seen_[id];
    if (static_cast<int>(j.attempts.size()) < seen) {
      out += "invariant 2: job " + id + " had " + std::to_string(seen) + " attempts, now " +
             std::to_string(j.attempts.size()) + "; ";
    }
    seen = std::max(seen, static_cast<int>(j.attempts.size()));
    for (size_t i = 0; i < j.attempts.size(); ++i) {
      const jobs::Attempt& a = j.attempts[i];
      if (a.number != static_cast<int>(i + 1)) {
        out += "invariant 2: job " + id + " attempt " + std::to_string(i + 1) + " is numbered " +
               std::to_string(a.number) + "; ";
      }
      out += attempt_shape_violation(j, a, i + 1 == j.attempts.size());
      out += stale_hold_violation(s, j, a);
      if (!jobs::is_terminal(a.state)) continue;
      auto [it, fresh] = terminal_.emplace(std::make_pair(id, a.number), terminal_hash(a));
      if (!fresh && it->second != terminal_hash(a)) {
        out += "invariant 2: terminal " + attempt_name(j, a) + " changed; ";
      }
    }
  }
  return out;
}

std::string InvariantChecker::check(const State& s) {
  std::string out = one_holder_per_target_violation(s);
  if (!out.empty()) out = "invariant 1: " + out;
  out += attempts_never_change(s);
  out += job_index_violation(s);
  out += hold_index_violation(s);
  for (const auto& [id, c] : s.connectors.by_id) out += connector_violation(s, c);
  checks_ += 7;
  return out;
}

}  // namespace runledger::testing

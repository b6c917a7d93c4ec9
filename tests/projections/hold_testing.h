// Helpers of the hold and gate tests: command builders, a job put in memory
// without the job model, an independent rebuild of the hold indexes, and the
// last stored event. The refusal checks and the replay are decider_testing.h's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "events/event_codec.h"
#include "events/event_json.h"
#include "http/rejection_status.h"
#include "projections/state.h"
#include "tests/projections/decider_testing.h"

namespace runledger::testing {

inline holds::Place place_cmd(std::string id, std::string target, std::string kind,
                              std::string reason = "earlier run lost", std::string job = "") {
  return holds::Place{std::move(id), std::move(target), std::move(kind), std::move(reason),
                      std::move(job)};
}

inline holds::ReleaseHold release_cmd(std::string id, std::string note,
                                      std::optional<bool> execution_stopped = std::nullopt,
                                      std::optional<std::string> outcome = std::nullopt) {
  return holds::ReleaseHold{std::move(id), std::move(note), execution_stopped, std::move(outcome)};
}

// Given a job in memory on `target` whose latest of `attempts` attempts is
// in `latest` (earlier ones FAILED), as the engine holds it after enqueue and
// retries. Built as state, not events, so hold tests need no job model.
inline jobs::Job& given_job(Given& g, const std::string& id, const std::string& target,
                            int attempts, jobs::AttemptState latest = jobs::AttemptState::kQueued) {
  jobs::Job j;
  j.id = id;
  j.kind = "load";
  j.target = target;
  for (int n = 1; n <= attempts; ++n) {
    jobs::Attempt a;
    a.number = n;
    a.state = n < attempts ? jobs::AttemptState::kFailed : latest;
    j.attempts.push_back(a);
  }
  return g.state.jobs.by_id[id] = std::move(j);
}

// The indexes as they must be, recomputed from by_id alone (the auditor's
// view): the fold's incremental indexes must equal this.
inline holds::HoldsState rebuilt_indexes(const holds::HoldsState& live) {
  holds::HoldsState out;
  out.by_id = live.by_id;
  for (const auto& [id, h] : live.by_id) {
    if (h.released) continue;
    if (h.kind == holds::kExecutionStateUnknown) out.blocking_by_target[h.target].insert(id);
    if (h.kind == holds::kResultUnknown) out.recovery_by_target[h.target].insert(id);
    ++out.open_by_kind[h.kind];
  }
  return out;
}

// The last stored event as JSON (event_json: type, stream, data...).
inline nlohmann::json last_event_json(const Given& g) {
  const fb::Event* e = nullptr;
  Status st = decode_event(g.log().back(), &e);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return st.ok() ? event_json(*e) : nlohmann::json();
}

}  // namespace runledger::testing

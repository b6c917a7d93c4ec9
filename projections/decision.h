// What a decider returns, and what it may read besides the state.
//
// Deciders are pure: decide(state, command, context) -> Decision. No I/O, no
// clock (time is context.now_ms), no randomness (ids and tokens come from
// context.ids or inside the command). The engine appends decision.events
// atomically, folds them into the state, and only then renders a reply.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "events/event_generated.h"
#include "projections/rejection_code.h"
#include "projections/stream_name.h"

namespace runledger {

// A refusal. `code` says why (projections/rejection_code.h; the HTTP layer
// maps it to a status: 404 for an unknown entity, 422 for input the decider
// finds out of range, 409 for a transition the state does not allow);
// `extra` is merged into the error JSON (e.g. {"state": "QUEUED",
// "allowed": ["claim", "cancel"]}).
struct Rejection {
  RejectionCode code = RejectionCode::kInvalidTransition;
  std::string message;
  nlohmann::json extra = nlohmann::json::object();
};

// An event to append to `stream` ("job/<id>", "connector/<id>", "hold/<id>").
struct NewEvent {
  std::string stream;
  fb::PayloadUnion payload;
};

struct Decision {
  std::vector<NewEvent> events;
  // Set when the command is refused. May come with events: an ignored sync
  // report is recorded, a start refused for a requested cancel records the
  // cancellation.
  std::optional<Rejection> rejection;
  // Facts for the reply that the state after the events no longer shows
  // (e.g. "existing": true for an idempotent enqueue, the view of a
  // connector that was just deleted). Pure data; empty when unused.
  nlohmann::json body;

  static Decision reject(RejectionCode code, std::string message,
                         nlohmann::json extra = nlohmann::json::object()) {
    Decision d;
    d.rejection = Rejection{code, std::move(message), std::move(extra)};
    return d;
  }
  template <typename T>
  void emit(std::string stream, T&& table) {
    NewEvent e;
    e.stream = std::move(stream);
    e.payload.Set(std::forward<T>(table));
    events.push_back(std::move(e));
  }
};

// Limits and timings the deciders apply; set from the server's flags.
struct Policy {
  int64_t lease_default_s = 30;
  int64_t lease_min_s = 1;
  int64_t lease_max_s = 3600;
  int64_t stale_lock_s = 3600;
  int64_t retry_backoff_s = 1;  // first retry; doubles per attempt
  int64_t retry_backoff_max_s = 300;
};

// Source of fresh ids for entities a decider creates on its own (a hold
// placed on lease expiry, a sync started by the schedule). The engine's is
// random; tests use a counter so runs are reproducible.
class IdSource {
 public:
  virtual ~IdSource() = default;
  virtual std::string next_id(std::string_view prefix) = 0;
};

struct Context {
  int64_t now_ms = 0;
  std::string_view actor;
  const Policy* policy = nullptr;
  IdSource* ids = nullptr;
};

}  // namespace runledger

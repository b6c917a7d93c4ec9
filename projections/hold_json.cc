// A hold as JSON: view() is the HTTP contract (docs/api.md "A hold in
// JSON"); to_json() is every field, with raw millisecond times and the
// stream version, for comparing states.
#include "base/time_text.h"
#include "events/event_codec.h"
#include "projections/state.h"

namespace runledger::holds {

namespace {

using Json = nlohmann::json;

Json text_or_null(const std::string& s) { return s.empty() ? Json(nullptr) : Json(s); }

Json time_or_null(int64_t ms) { return ms == 0 ? Json(nullptr) : Json(format_time_ms(ms)); }

}  // namespace

nlohmann::json view(const Hold& h) {
  return {{"id", h.id},
          {"target", h.target},
          {"kind", h.kind},
          {"job", text_or_null(h.job)},
          {"attempt", h.attempt > 0 ? Json(h.attempt) : Json(nullptr)},
          {"reason", h.reason},
          {"placed_by", h.placed_by},
          {"placed_at", time_or_null(h.placed_at_ms)},
          {"released", h.released},
          {"released_by", h.released ? text_or_null(h.released_by) : Json(nullptr)},
          {"released_at", h.released ? time_or_null(h.released_at_ms) : Json(nullptr)},
          {"release_note", h.released ? text_or_null(h.release_note) : Json(nullptr)},
          {"execution_stopped", h.execution_stopped},
          {"outcome", text_or_null(h.outcome)}};
}

nlohmann::json to_json(const Hold& h) {
  return {{"id", h.id},
          {"target", h.target},
          {"kind", h.kind},
          {"job", h.job},
          {"attempt", h.attempt},
          {"reason", h.reason},
          {"placed_by", h.placed_by},
          {"placed_at_ms", h.placed_at_ms},
          {"released", h.released},
          {"released_by", h.released_by},
          {"released_at_ms", h.released_at_ms},
          {"release_note", h.release_note},
          {"execution_stopped", h.execution_stopped},
          {"outcome", h.outcome},
          {"version", h.version}};
}

}  // namespace runledger::holds

// A hold as JSON: view() is the HTTP contract (docs/api.md "A hold in
// JSON"); to_json()/from_json() are the lossless internal form that
// snapshots and hydration store, with raw millisecond times and the stream
// version, so from_json(to_json(h)) == h.
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

Hold from_json(const nlohmann::json& j) {
  Hold h;
  j.at("id").get_to(h.id);
  j.at("target").get_to(h.target);
  j.at("kind").get_to(h.kind);
  j.at("job").get_to(h.job);
  j.at("attempt").get_to(h.attempt);
  j.at("reason").get_to(h.reason);
  j.at("placed_by").get_to(h.placed_by);
  j.at("placed_at_ms").get_to(h.placed_at_ms);
  j.at("released").get_to(h.released);
  j.at("released_by").get_to(h.released_by);
  j.at("released_at_ms").get_to(h.released_at_ms);
  j.at("release_note").get_to(h.release_note);
  j.at("execution_stopped").get_to(h.execution_stopped);
  j.at("outcome").get_to(h.outcome);
  j.at("version").get_to(h.version);
  return h;
}

}  // namespace runledger::holds

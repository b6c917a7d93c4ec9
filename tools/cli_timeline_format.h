// How `runledger timeline` writes an event for a person: the delta between
// two events, the key fields of each event type as k=v, and the state words
// of a transition. Pure functions of their arguments.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "events/event_generated.h"
#include "projections/state.h"

namespace runledger::cli::timeline {

// "+1.234s", "+2m03.456s", "+1h02m03.456s" (and "-" when time went back).
std::string format_delta(int64_t delta_ms);

// The event's key fields as "k=v k=v": times as RFC 3339 (a field
// `x_ms` shows as `x`), lists joined by commas, empty and zero values left
// out. A type with no list of key fields shows every field.
std::string key_fields(const fb::Event& e);

// The attempt state of job `id`'s attempt `number` in `s`, "(none)" when the
// job or attempt does not exist.
std::string attempt_state(const State& s, const std::string& id, int number);
// "active/idle" for a connector, "(none)" when absent (never created, or deleted).
std::string connector_state(const State& s, const std::string& id);
// "open" / "released" for a hold, "(none)" when absent.
std::string hold_state(const State& s, const std::string& id);

// "A -> B", or just "A" when nothing changed.
std::string transition(const std::string& before, const std::string& after);

// The attempt a job event names (0 for none).
int attempt_of(const fb::Event& e);

// `text` with every control byte (below 0x20, and 0x7f) written as \xNN: a
// target, worker or actor is the client's text, and an escape sequence in it
// must not move the cursor or clear the terminal of whoever reads the story.
std::string for_terminal(std::string_view text);

}  // namespace runledger::cli::timeline

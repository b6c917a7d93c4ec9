// State digests for engine tests: everything a State holds (entities in
// their lossless form and as the API shows them, every index, the seq and
// hash it covers) as one JSON value, so two states compare with == and a
// difference prints as a JSON patch. Also the invariant checks that read a
// State (docs/domain.md section 4).
#pragma once

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "projections/state.h"

namespace runledger::testing {

// The whole State: equal digests mean equal states, indexes included.
nlohmann::json state_digest(const State& s);

// The API view of every entity in memory, keyed by stream name.
nlohmann::json live_views(const State& s);

// A readable account of how `b` differs from `a` (a JSON patch, cut short).
std::string describe_difference(const nlohmann::json& a, const nlohmann::json& b);

// Success when the digests are equal; otherwise the difference, short.
::testing::AssertionResult same_state(const nlohmann::json& expected, const nlohmann::json& actual);

// Invariant 1: at most one LEASED/RUNNING attempt per target. Empty when it
// holds; otherwise which target has which attempts. Also checks that the
// holder index names exactly those attempts.
std::string one_holder_per_target_violation(const State& s);

}  // namespace runledger::testing

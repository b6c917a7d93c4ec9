// What the randomized engine suites say about a command: a one-line account
// of it for failure messages, and which events a refused one may still have
// recorded.
#pragma once

#include <string>
#include <string_view>

#include "engine/command.h"

namespace runledger::testing {

// The command's name, the streams it names, and the step, observed outcome
// or sync it is about: "StepDone job/j1 step load".
std::string describe_command(const Command& c);

// What a refused command may still record (docs/domain.md invariant 6's
// exception): an ignored sync report, and the cancellation a refused start or
// step start enforces.
bool recorded_despite_refusal(std::string_view event_type);

}  // namespace runledger::testing

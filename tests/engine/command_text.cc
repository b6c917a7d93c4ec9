// Command descriptions for the randomized suites: see command_text.h.
#include "tests/engine/command_text.h"

#include <variant>

namespace runledger::testing {

std::string describe_command(const Command& c) {
  std::string out = command_name(c);
  for (const auto& s : streams_named(c)) out += " " + s;
  if (const auto* x = std::get_if<jobs::StepStart>(&c)) out += " step " + x->step;
  if (const auto* x = std::get_if<jobs::StepDone>(&c)) out += " step " + x->step;
  if (const auto* x = std::get_if<jobs::StepFail>(&c)) out += " step " + x->step;
  if (const auto* x = std::get_if<jobs::Reattach>(&c)) out += " observed " + x->observed;
  if (const auto* x = std::get_if<connectors::StartSync>(&c)) out += " sync " + x->sync_id;
  return out;
}

bool recorded_despite_refusal(std::string_view event_type) {
  return event_type == "SyncReportIgnored" || event_type == "AttemptCancelled";
}

}  // namespace runledger::testing

// The job's transition table: see job_commands.h.
#include "projections/job_commands.h"

namespace runledger::jobs::detail {

namespace {

bool rule_accepts(const CommandRule& rule, const Attempt& a) {
  if ((rule.states & state_bit(a.state)) == 0) return false;
  return !rule.needs_cancel_requested || a.cancel_requested;
}

}  // namespace

bool state_accepts(AttemptState state, std::string_view command) {
  for (const CommandRule& rule : kCommandRules) {
    if (rule.command == command) return (rule.states & state_bit(state)) != 0;
  }
  return false;
}

std::vector<std::string> allowed_commands(const Attempt& a) {
  std::vector<std::string> out;
  for (const CommandRule& rule : kCommandRules) {
    if (rule_accepts(rule, a)) out.emplace_back(rule.command);
  }
  return out;
}

}  // namespace runledger::jobs::detail

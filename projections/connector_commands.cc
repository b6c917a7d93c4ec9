// The connector's transition table: see connector_commands.h.
#include "projections/connector_commands.h"

#include "base/assert.h"

namespace runledger::connectors {

namespace {

bool holds(Condition when, const Connector& c) {
  switch (when) {
    case Condition::kDeleting:
      return c.status == Status::kDeleting;
    case Condition::kPaused:
      return c.status == Status::kPaused;
    case Condition::kSyncRunning:
      return c.running();
    case Condition::kNoSyncRunning:
      return !c.running();
  }
  return false;
}

const Refusal* first_refusal(const CommandGate& gate, const Connector& c) {
  for (size_t i = 0; i < gate.count; ++i) {
    if (holds(gate.refusals[i].when, c)) return &gate.refusals[i];
  }
  return nullptr;
}

}  // namespace

const Refusal* refusal_of(const Connector& c, std::string_view command) {
  for (const CommandGate& gate : kCommandGates) {
    if (gate.command == command) return first_refusal(gate, c);
  }
  RL_ASSERT(false, "every command asked about has a gate in kCommandGates");
  return nullptr;
}

std::vector<std::string_view> allowed_commands(const Connector& c) {
  std::vector<std::string_view> out;
  for (const CommandGate& gate : kCommandGates) {
    if (first_refusal(gate, c) == nullptr) out.push_back(gate.command);
  }
  return out;
}

}  // namespace runledger::connectors

// The connector's transition table as data (docs/domain.md "Connectors",
// "Commands"): for each command an operator gives a connector, the
// conditions that refuse it, in the order they are checked, each with its
// code and its sentence. The deciders' gates, the `allowed` list of every
// conflict, and the transition checker of `runledger verify` all read this
// one table; the tests hold the deciders to it.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>
#include <vector>

#include "projections/connector.h"
#include "projections/rejection_code.h"

namespace runledger::connectors {

// Command names as `allowed` lists them.
inline constexpr std::string_view kCmdUpdate = "update";
inline constexpr std::string_view kCmdSync = "sync";
inline constexpr std::string_view kCmdAbort = "abort";
inline constexpr std::string_view kCmdDelete = "delete";

// What a connector is, as far as the table asks.
enum class Condition : uint8_t {
  kDeleting,      // status deleting
  kPaused,        // status paused
  kSyncRunning,   // sync_status running
  kNoSyncRunning  // sync_status idle
};

struct Refusal {
  Condition when;
  RejectionCode code;
  std::string_view message;  // the 409's `error`, exactly
};

struct CommandGate {
  std::string_view command;
  std::array<Refusal, 3> refusals;  // the first `count` apply, in this order
  size_t count;
};

inline constexpr Refusal kRefusedWhileDeleting{
    Condition::kDeleting, RejectionCode::kConnectorDeleting, "Connector is being deleted"};

// In the order `allowed` lists them.
inline constexpr CommandGate kCommandGates[] = {
    {kCmdUpdate, {kRefusedWhileDeleting}, 1},
    {kCmdSync,
     {kRefusedWhileDeleting,
      Refusal{Condition::kPaused, RejectionCode::kConnectorPaused, "Connector is paused"},
      Refusal{Condition::kSyncRunning, RejectionCode::kSyncInProgress, "Sync already in progress"}},
     3},
    {kCmdAbort,
     {Refusal{Condition::kNoSyncRunning, RejectionCode::kNoSyncInProgress, "No sync in progress"}},
     1},
    {kCmdDelete,
     {kRefusedWhileDeleting, Refusal{Condition::kSyncRunning, RejectionCode::kSyncRunning,
                                     "Cannot delete connector while sync is running"}},
     2},
};

// The first refusal of `command` (one of the kCmd names) that holds for
// `c`; nullptr when the connector accepts it now.
const Refusal* refusal_of(const Connector& c, std::string_view command);

// The commands `c` accepts now, in the table's order.
std::vector<std::string_view> allowed_commands(const Connector& c);

}  // namespace runledger::connectors

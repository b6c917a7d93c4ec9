// The hold's transition table as data (docs/domain.md "Holds"): a hold is
// open from its placing until its release, and released for good after it.
// The only command on a hold is its release, which an open hold accepts. The
// decider's gate, the `allowed` list of its refusal and the transition
// checker of `runledger verify` read it here.
#pragma once

#include <string_view>
#include <vector>

#include "projections/hold.h"

namespace runledger::holds {

inline constexpr std::string_view kCmdRelease = "release";

// "open" or "released": the `state` a refusal names.
constexpr std::string_view state_name(const Hold& h) { return h.released ? "released" : "open"; }

// Whether `h` accepts `command` now.
constexpr bool accepts(const Hold& h, std::string_view command) {
  return command == kCmdRelease && !h.released;
}

// The commands `h` accepts now.
inline std::vector<std::string_view> allowed_commands(const Hold& h) {
  if (accepts(h, kCmdRelease)) return {kCmdRelease};
  return {};
}

}  // namespace runledger::holds

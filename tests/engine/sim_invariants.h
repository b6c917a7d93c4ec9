// InvariantChecker: what must hold in the engine's State at every moment
// (docs/domain.md section 4, and the rules of sections 1 to 3 that section 4
// leans on), checked by the simulation after every step. Each violation is
// named after the rule it breaks, so a failure says which promise failed:
//
//   invariant 1       at most one LEASED/RUNNING attempt per target
//   invariant 2       a terminal attempt never changes; numbers never reused
//   stale hold        every STALE attempt has its open hold (1.4, 1.8, 3)
//   attempt shape     leases, steps and cancel fields agree with the state
//   job indexes       ready/holder/expiry/count indexes equal a recount
//   hold indexes      blocking/recovery/kind indexes equal a recount
//   connector fields  last_error only with status error, counts, slots
//
// Invariants 3 to 7 need the log or the replies: the simulation checks them.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>

#include "base/sha256.h"
#include "projections/state.h"

namespace runledger::testing {

class InvariantChecker {
 public:
  // Empty when everything holds; otherwise each violation, named.
  std::string check(const State& s);
  // Individual invariant checks done so far (one per rule per check()).
  size_t checks() const { return checks_; }

 private:
  std::string attempts_never_change(const State& s);

  // (job, attempt number) -> hash of the attempt when first seen terminal.
  std::map<std::pair<std::string, int>, Hash> terminal_;
  // job -> most attempts ever seen: the count never goes down.
  std::map<std::string, int> attempts_seen_;
  size_t checks_ = 0;
};

}  // namespace runledger::testing

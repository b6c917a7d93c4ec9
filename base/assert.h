// RL_ASSERT: an invariant that only a bug in this program can break (not
// bad input, not a failing disk: those get error values). It stays on in
// release builds: a process whose state broke an invariant stops at once,
// saying where and why, rather than write that state to the log.
#pragma once

namespace runledger {

[[noreturn]] void assertion_failed(const char* condition, const char* why, const char* file,
                                   int line);

}  // namespace runledger

#define RL_ASSERT(condition, why)     \
  ((condition) ? static_cast<void>(0) \
               : ::runledger::assertion_failed(#condition, why, __FILE__, __LINE__))

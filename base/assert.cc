// The failure of an RL_ASSERT: see assert.h.
#include "base/assert.h"

#include <cstdio>
#include <cstdlib>

namespace runledger {

void assertion_failed(const char* condition, const char* why, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: invariant broken: %s (%s)\n", file, line, why, condition);
  std::fflush(stderr);
  std::abort();
}

}  // namespace runledger

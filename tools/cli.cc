#include "tools/cli.h"

#include <cstdio>

namespace runledger {

// Replaced by the full subcommand dispatch (tools/cli_*.cc).
int cli_main(int, char**) {
  std::fprintf(stderr, "runledger: no subcommands are built in this tree yet\n");
  return 64;
}

}  // namespace runledger

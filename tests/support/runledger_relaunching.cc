// runledger_relaunching: the CLI with the relaunch fault of
// worker::inject_relaunch_fault() (worker/runner.h) turned on. Built with the
// tests only: the exclusivity tests' positive control runs `work` from it to
// show that their probe catches a runner that runs a live step again.
#include "tools/cli.h"
#include "worker/runner.h"

int main(int argc, char** argv) {
  runledger::worker::inject_relaunch_fault();
  return runledger::cli_main(argc, argv);
}

// runledger: the CLI (replay, verify, timeline, events, export, import, gate, bench).
#include "tools/cli.h"

int main(int argc, char** argv) { return runledger::cli_main(argc, argv); }

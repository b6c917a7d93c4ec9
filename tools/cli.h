// The runledger CLI entry point: dispatches to the subcommands in tools/.
#pragma once

namespace runledger {
int cli_main(int argc, char** argv);
}

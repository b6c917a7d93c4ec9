// The subcommands of `runledger`, one file each (tools/cli_<name>.cc). Each
// add_<name>() registers its options on the root app and returns what runs
// it; cli_main() runs the one the arguments chose.
#pragma once

#include <CLI/CLI.hpp>

#include "tools/cli_common.h"

namespace runledger::cli {

Subcommand add_replay(CLI::App& root);
Subcommand add_verify(CLI::App& root);
Subcommand add_timeline(CLI::App& root);
Subcommand add_events(CLI::App& root);
Subcommand add_export(CLI::App& root);
Subcommand add_import(CLI::App& root);
Subcommand add_gate(CLI::App& root);
Subcommand add_bench(CLI::App& root);
// Talking to a running server (tools/cli_remote.h).
Subcommand add_job(CLI::App& root);
Subcommand add_hold(CLI::App& root);
Subcommand add_connector(CLI::App& root);
// `runledger work` (worker/runner.h).
Subcommand add_work(CLI::App& root);
// `runledger events tail`, under `events`.
Subcommand add_events_tail(CLI::App& events);
// `runledger completion bash|zsh`, from the commands registered on `root`.
Subcommand add_completion(CLI::App& root);

}  // namespace runledger::cli

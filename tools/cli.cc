// cli_main(): the `runledger` command line. Each subcommand lives in its own
// tools/cli_<name>.cc; this file registers them, parses the arguments and
// runs the one chosen. Usage errors exit 64 (sysexits.h EX_USAGE).
#include "tools/cli.h"

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "tools/cli_commands.h"

namespace runledger {

int cli_main(int argc, char** argv) {
  CLI::App app{
      "runledger: replay, audit and forensics on a runledger data folder (also while runledgerd "
      "runs: the folder is opened read-only), and the jobs, holds, connectors and live log of a "
      "running server"};
  app.require_subcommand(1);
  std::vector<cli::Subcommand> commands = {
      cli::add_replay(app), cli::add_verify(app), cli::add_timeline(app),  cli::add_events(app),
      cli::add_export(app), cli::add_import(app), cli::add_gate(app),      cli::add_bench(app),
      cli::add_job(app),    cli::add_hold(app),   cli::add_connector(app), cli::add_work(app)};
  // Last: it describes every command registered before it.
  commands.push_back(cli::add_completion(app));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? cli::kExitOk : cli::kExitUsage;
  }
  for (const auto& c : commands) {
    if (!c.app->parsed()) continue;
    try {
      return c.run();
    } catch (const std::exception& e) {
      return cli::fail(std::string("unexpected error: ") + e.what(), cli::kExitSoftware);
    }
  }
  return cli::kExitUsage;
}

}  // namespace runledger

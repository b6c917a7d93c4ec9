// Subprocesses of the tests: the built binaries started for real, with
// stdin from /dev/null, stdout and stderr into files, and none of the
// caller's RUNLEDGER_* variables (a test's settings are not theirs: the
// flags it passes are the whole configuration).
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace runledger::testing {

// The caller's environment without RUNLEDGER_* variables, plus `extra`
// ("NAME=VALUE" each).
std::vector<std::string> clean_environment(const std::vector<std::string>& extra = {});

// Starts `argv` (argv[0] a path) with `env`, stdout into `out_path` and
// stderr into `err_path`; throws std::runtime_error when it cannot start.
pid_t spawn_process(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                    const std::string& out_path, const std::string& err_path);

// The exit code in a waitpid status; 128 + the signal for a process killed
// by one (as a shell says it); -1 otherwise.
int exit_code_of(int wait_status);

// Waits for `pid` to end; its exit_code_of(), -1 when it cannot be waited for.
int wait_for_exit(pid_t pid);

// Runs `line` with /bin/sh; its exit code (-1 when it did not exit) and what
// it printed on both streams.
std::pair<int, std::string> run_shell(const std::string& line);

// The whole content of a file ("" when it cannot be read).
std::string read_whole_file(const std::string& path);

struct CliResult {
  int code = -1;  // exit_code_of(); -1 when it could not run
  std::string out;
  std::string err;
};

// Runs the built binary `name` ("runledger", "runledgerd") with `args` and
// clean_environment(`env`), and waits for it.
CliResult run_binary(const std::string& name, const std::vector<std::string>& args,
                     const std::vector<std::string>& env = {});
// run_binary("runledger", ...).
CliResult run_cli(const std::vector<std::string>& args, const std::vector<std::string>& env = {});

}  // namespace runledger::testing

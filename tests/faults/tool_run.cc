// ToolRun: see tool_run.h.
#include "tests/faults/tool_run.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string_view>

#include "tests/support/test_support.h"

extern char** environ;

namespace runledger::testing {
namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> tool_env() {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string_view(*e).substr(0, 10) != "RUNLEDGER_") env.emplace_back(*e);
  }
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

ToolRun run_runledger(const std::vector<std::string>& args) {
  TempDir outputs;
  const std::string out = outputs.path() + "/out", err = outputs.path() + "/err";
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  std::vector<std::string> argv = {bin_path("runledger")};
  argv.insert(argv.end(), args.begin(), args.end());
  auto env = tool_env();
  auto argv_c = c_strings(argv);
  auto env_c = c_strings(env);
  pid_t pid = -1;
  ToolRun r;
  int rc = posix_spawn(&pid, argv_c[0], &fa, nullptr, argv_c.data(), env_c.data());
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    r.err = "cannot start " + argv[0];
    return r;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) r.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.code = 128 + WTERMSIG(status);
  r.out = read_all(out);
  r.err = read_all(err);
  return r;
}

}  // namespace runledger::testing

// Subprocesses of the tests: see subprocess.h.
#include "tests/support/subprocess.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "tests/support/test_support.h"

extern char** environ;

namespace runledger::testing {
namespace {

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

std::vector<std::string> clean_environment(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string_view(*e).substr(0, 10) != "RUNLEDGER_") env.emplace_back(*e);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

pid_t spawn_process(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                    const std::string& out_path, const std::string& err_path) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> args = argv, vars = env;
  auto args_c = c_strings(args);
  auto vars_c = c_strings(vars);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args_c[0], &fa, nullptr, args_c.data(), vars_c.data());
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0]);
  return pid;
}

int exit_code_of(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return -1;
}

int wait_for_exit(pid_t pid) {
  int status = 0;
  for (;;) {
    if (waitpid(pid, &status, 0) == pid) return exit_code_of(status);
    if (errno != EINTR) return -1;
  }
}

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

CliResult run_binary(const std::string& name, const std::vector<std::string>& args,
                     const std::vector<std::string>& env) {
  TempDir io;
  std::vector<std::string> argv = {bin_path(name)};
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string out = io.path() + "/out", err = io.path() + "/err";
  CliResult r;
  try {
    r.code = wait_for_exit(spawn_process(argv, clean_environment(env), out, err));
  } catch (const std::runtime_error& e) {
    r.err = e.what();
    return r;
  }
  r.out = read_whole_file(out);
  r.err = read_whole_file(err);
  return r;
}

CliResult run_cli(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  return run_binary("runledger", args, env);
}

std::pair<int, std::string> run_shell(const std::string& line) {
  std::string out;
  FILE* p = ::popen((line + " 2>&1").c_str(), "r");
  if (p == nullptr) return {-1, ""};
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace runledger::testing

// runledgerd's command line: --help lists every flag of tools.md, and a
// flag that is wrong exits 2, whatever is wrong with it, before the data
// folder is made or opened.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/subprocess.h"
#include "tests/support/test_support.h"

namespace runledger::testing {
namespace {

constexpr int kExitServerUsage = 2;

CliResult run_server(std::vector<std::string> args) {
  TempDir out;
  args.insert(args.begin(), bin_path("runledgerd"));
  const std::string out_path = out.path() + "/out", err_path = out.path() + "/err";
  CliResult r;
  r.code = wait_for_exit(spawn_process(args, clean_environment(), out_path, err_path));
  r.out = read_whole_file(out_path);
  r.err = read_whole_file(err_path);
  return r;
}

TEST(ServerUsage, HelpListsEveryFlagOfTheContract) {
  CliResult r = run_server({"--help"});
  EXPECT_EQ(r.code, 0) << r.err;
  for (const char* flag : {"--listen", "--data", "--stale-lock-s", "--lease-default-s",
                           "--lease-max-s", "--body-limit-bytes", "--http-threads", "--auth-tokens",
                           "--retry-backoff-s", "--log-level", "--read-only"}) {
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag << " missing from:\n" << r.out;
  }
}

TEST(ServerUsage, EveryWrongFlagExits2AndTouchesNoDataFolder) {
  TempDir dir;
  const std::string data = dir.path() + "/data";
  const std::vector<std::vector<std::string>> wrong = {
      {"--no-such-flag"},           {"--listen"},  // no value
      {"--lease-default-s", "abc"}, {"--listen", "nothing-like-an-address"},
      {"--log-level", "chatty"},    {"--lease-default-s", "60", "--lease-max-s", "30"},
      {"--listen", "0.0.0.0:0"},  // beyond loopback without --auth-tokens
  };
  for (auto args : wrong) {
    std::string shown;
    for (const auto& a : args) shown += a + " ";
    args.insert(args.end(), {"--data", data});
    CliResult r = run_server(args);
    EXPECT_EQ(r.code, kExitServerUsage) << shown << "\n" << r.err;
    EXPECT_FALSE(r.err.empty()) << shown << ": says nothing of what is wrong";
    EXPECT_FALSE(std::filesystem::exists(data)) << shown;
  }
}

}  // namespace
}  // namespace runledger::testing

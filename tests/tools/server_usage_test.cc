// runledgerd's command line: --help lists every flag of docs/cli.md, each is
// also read from RUNLEDGER_<NAME>, and a flag that is wrong exits 2,
// whatever is wrong with it, before the data folder is made or opened.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/subprocess.h"
#include "tests/support/test_support.h"

namespace runledger::testing {
namespace {

constexpr int kExitServerUsage = 2;

CliResult run_server(const std::vector<std::string>& args,
                     const std::vector<std::string>& env = {}) {
  return run_binary("runledgerd", args, env);
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
      {"--lease-max-s", "3601"},    {"--lease-default-s", "3601"},  // leases: at most 1 h
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

TEST(ServerUsage, EveryFlagIsReadFromItsEnvironmentVariable) {
  // Given each RUNLEDGER_<NAME> alone, with a value its flag refuses, Then
  // the start fails as that flag would. A variable that were not read would
  // leave a start that fails later, at the data folder given as a file.
  TempDir dir;
  const std::string not_a_folder = dir.path() + "/file";
  { std::ofstream(not_a_folder) << "not a data folder"; }
  const std::vector<std::string> wrong = {
      "RUNLEDGER_LISTEN=nothing-like-an-address",
      "RUNLEDGER_STALE_LOCK_S=0",
      "RUNLEDGER_LEASE_DEFAULT_S=0",
      "RUNLEDGER_LEASE_MAX_S=0",
      "RUNLEDGER_BODY_LIMIT_BYTES=1",
      "RUNLEDGER_HTTP_THREADS=1",
      "RUNLEDGER_RETRY_BACKOFF_S=301",
      "RUNLEDGER_LOG_LEVEL=chatty",
      "RUNLEDGER_READ_ONLY=perhaps",
      "RUNLEDGER_SNAPSHOT_EVERY_EVENTS=1",
  };
  for (const auto& var : wrong) {
    CliResult r = run_server({"--data", not_a_folder}, {var});
    EXPECT_EQ(r.code, kExitServerUsage) << var << "\n" << r.err;
  }
  // The two that take a path: the start fails on the one given.
  CliResult data = run_server({"--listen", "127.0.0.1:0"}, {"RUNLEDGER_DATA=" + not_a_folder});
  EXPECT_NE(data.code, 0);
  EXPECT_NE(data.err.find(not_a_folder), std::string::npos) << data.err;
  CliResult tokens = run_server({"--listen", "127.0.0.1:0", "--data", dir.path() + "/d"},
                                {"RUNLEDGER_AUTH_TOKENS=" + dir.path() + "/no-such-file"});
  EXPECT_NE(tokens.code, 0);
  EXPECT_NE(tokens.err.find("no-such-file"), std::string::npos) << tokens.err;
}

}  // namespace
}  // namespace runledger::testing

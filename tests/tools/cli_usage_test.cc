// The command line itself: every subcommand has --help, bad arguments exit
// 64, and a data folder that holds no store is said to.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/tools/tools_test_support.h"

namespace runledger::testing {
namespace {

TEST(CliUsage, EverySubcommandHasHelp) {
  for (const char* sub : {"replay", "verify", "timeline", "events", "export", "import", "gate"}) {
    CliResult r = run_cli({sub, "--help"});
    EXPECT_EQ(r.code, 0) << sub << ": " << r.err;
    EXPECT_NE(r.out.find(sub), std::string::npos) << r.out;
  }
}

TEST(CliUsage, BadArgumentsExit64) {
  EXPECT_EQ(run_cli({}).code, kExitUsage);
  EXPECT_EQ(run_cli({"rewind"}).code, kExitUsage);
  EXPECT_EQ(run_cli({"replay"}).code, kExitUsage) << "--data is required";
  TempDir dir;
  CliResult t = run_cli({"replay", "--data", dir.path(), "--until-time", "yesterday"});
  EXPECT_EQ(t.code, kExitUsage);
  EXPECT_NE(t.err.find("--until-time must be an RFC 3339 time"), std::string::npos) << t.err;
  EXPECT_EQ(run_cli({"replay", "--data", dir.path(), "--compare", "--until-seq", "3"}).code,
            kExitUsage);
  EXPECT_EQ(run_cli({"timeline", "a/b", "--data", dir.path()}).code, kExitUsage);
  // A seq past 64 bits is a mistake, not the end of the log; an empty filter
  // is a mistake, not "no filter".
  const std::vector<std::vector<std::string>> wrong = {
      {"replay", "--until-seq", "18446744073709551616"},
      {"events", "--from-seq", "99999999999999999999999"},
      {"events", "--to-seq", "0"},
      {"replay", "--until-time", ""},
      {"replay", "--entity", ""},
      {"events", "--since", ""},
      {"events", "--until", ""},
      {"events", "--stream", ""},
  };
  for (auto args : wrong) {
    std::string shown;
    for (const auto& a : args) shown += "'" + a + "' ";
    args.insert(args.end(), {"--data", dir.path()});
    CliResult r = run_cli(args);
    EXPECT_EQ(r.code, kExitUsage) << shown << r.err;
    EXPECT_FALSE(r.err.empty()) << shown;
  }
  // The largest seq there can be is still a seq.
  EXPECT_NE(run_cli({"replay", "--until-seq", "18446744073709551615", "--data", dir.path()}).code,
            kExitUsage);
}

TEST(CliUsage, AFolderWithoutAStoreExits66) {
  TempDir dir;
  CliResult r = run_cli({"replay", "--data", dir.path()});
  EXPECT_EQ(r.code, kExitNoInput) << r.err;
  EXPECT_NE(r.err.find("holds no runledger store"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace runledger::testing

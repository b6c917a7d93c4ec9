// docs/operations.md's table of runledgerd's flags and the flags runledgerd
// has agree: the same flags, each with the environment variable it is also
// read from and the default it shows in --help. A flag added, renamed or
// given another default fails here until the table says so.
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/subprocess.h"
#include "tests/support/test_support.h"

namespace runledger::testing {
namespace {

struct FlagFacts {
  std::string env;
  std::string default_value;  // "" when none is shown
};

// From `runledgerd --help`: "  --lease-max-s INT:INT in [1 - 3600]=3600
// (Env:RUNLEDGER_LEASE_MAX_S)".
std::map<std::string, FlagFacts> flags_of_help(const std::string& help) {
  std::map<std::string, FlagFacts> out;
  static const std::regex line(R"(^\s+(--[a-z-]+)([^\n]*?)\(Env:(\w+)\))");
  static const std::regex default_value(R"(=(\S+)\s*$)");
  std::istringstream in(help);
  for (std::string text; std::getline(in, text);) {
    std::smatch m;
    if (!std::regex_search(text, m, line)) continue;
    FlagFacts facts{m[3].str(), ""};
    const std::string middle = m[2].str();
    std::smatch d;
    if (std::regex_search(middle, d, default_value)) facts.default_value = d[1].str();
    out[m[1].str()] = facts;
  }
  return out;
}

// From the table: "| `--lease-max-s N` | `RUNLEDGER_LEASE_MAX_S` | 3,600 | ... |", the
// default with its digit grouping and code quotes taken away.
std::map<std::string, FlagFacts> flags_of_docs(const std::string& path) {
  std::map<std::string, FlagFacts> out;
  static const std::regex row(R"(^\| `(--[a-z-]+)[^`]*` \| `(\w+)` \| ([^|]*) \|)");
  std::ifstream in(path);
  for (std::string text; std::getline(in, text);) {
    std::smatch m;
    if (!std::regex_search(text, m, row)) continue;
    std::string value;
    for (char c : m[3].str()) {
      if (c != ',' && c != '`') value += c;
    }
    out[m[1].str()] = {m[2].str(), value};
  }
  return out;
}

TEST(ServerFlagsDoc, TheOperationsTableHasEveryFlagWithItsVariableAndDefault) {
  CliResult help = run_binary("runledgerd", {"--help"}, {});
  ASSERT_EQ(help.code, 0) << help.err;
  const auto code = flags_of_help(help.out);
  const auto docs = flags_of_docs(source_path("docs/operations.md"));
  ASSERT_GT(code.size(), 20u) << "the help was not read:\n" << help.out;
  ASSERT_GT(docs.size(), 20u) << "the table was not read";
  for (const auto& [flag, facts] : code) {
    auto it = docs.find(flag);
    if (it == docs.end()) {
      ADD_FAILURE() << flag << " is not in docs/operations.md";
      continue;
    }
    EXPECT_EQ(it->second.env, facts.env) << flag;
    // A default the help shows is the table's; where the help shows none
    // (a path, a flag that is off), the table says so in words.
    if (!facts.default_value.empty()) {
      EXPECT_EQ(it->second.default_value, facts.default_value) << flag;
    }
  }
  for (const auto& [flag, facts] : docs) {
    EXPECT_EQ(code.count(flag), 1u) << flag << " is in docs/operations.md but runledgerd has none";
  }
}

}  // namespace
}  // namespace runledger::testing

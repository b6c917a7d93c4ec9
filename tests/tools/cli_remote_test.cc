// The CLI's verbs for a running server (docs/cli.md "Talking to a running
// server"), as real `runledger` subprocesses against a real `runledgerd`:
// jobs, holds and connectors listed, shown and commanded; JSON with --output
// json; the exit codes (1 refused with the server's message, 69
// unreachable, 64 bad arguments); a token from a file; the live log
// followed with `events tail`; completion scripts.
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <regex>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/tools/tools_test_support.h"

namespace runledger::testing {
namespace {

using nlohmann::json;

class CliRemoteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(data_.path() + "/data", flags());
    ASSERT_TRUE(server_->wait_ready()) << server_->log();
  }
  void TearDown() override {
    if (server_ && server_->running()) {
      EXPECT_EQ(server_->terminate(), 0) << server_->log();
    }
  }
  virtual std::vector<std::string> flags() { return {}; }

  // `runledger <args> --server URL --output json`.
  CliResult cli(std::vector<std::string> args) {
    args.push_back("--server");
    args.push_back(server_->url());
    args.push_back("--output");
    args.push_back("json");
    return run_cli(args);
  }
  // The JSON of each line of out.
  static std::vector<json> json_lines(const std::string& out) {
    std::vector<json> v;
    for (const auto& line : lines_of(out)) v.push_back(json::parse(line, nullptr, false));
    return v;
  }

  TempDir data_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(CliRemoteTest, JobsAreEnqueuedListedShownCancelledAndRerun) {
  CliResult made = cli({"job", "enqueue", "--kind", "sync", "--target", "shop-a/orders", "--id",
                        "j1", "--input", R"({"from":"2026-05-06"})", "--plan", "FETCH,LOAD"});
  ASSERT_EQ(made.code, 0) << made.err;
  json job = json::parse(made.out, nullptr, false);
  EXPECT_EQ(job.value("id", ""), "j1");
  EXPECT_EQ(job["plan"], json::array({"FETCH", "LOAD"}));
  EXPECT_EQ(job["input"].value("from", ""), "2026-05-06");
  ASSERT_EQ(cli({"job", "enqueue", "--kind", "sync", "--target", "t2", "--id", "j2"}).code, 0);

  CliResult listed = cli({"job", "list", "--target", "shop-a/orders"});
  CliResult all = cli({"job", "list", "--limit", "1"});
  CliResult cancelled = cli({"job", "cancel", "j1", "--reason", "not today"});
  CliResult shown = cli({"job", "show", "j1"});
  CliResult then = cli({"job", "show", "j1", "--as-of", "1"});
  CliResult rerun = cli({"job", "rerun", "j1"});

  ASSERT_EQ(listed.code, 0) << listed.err;
  ASSERT_EQ(json_lines(listed.out).size(), 1u) << listed.out;
  EXPECT_EQ(json_lines(listed.out)[0].value("id", ""), "j1");
  EXPECT_EQ(json_lines(all.out).size(), 1u) << all.out;
  ASSERT_EQ(cancelled.code, 0) << cancelled.err;
  EXPECT_EQ(json::parse(cancelled.out, nullptr, false).value("state", ""), "CANCELLED");
  EXPECT_EQ(json::parse(shown.out, nullptr, false).value("cancel_reason", ""), "not today");
  EXPECT_EQ(json::parse(then.out, nullptr, false).value("state", ""), "QUEUED");
  ASSERT_EQ(rerun.code, 0) << rerun.err;
  EXPECT_EQ(json::parse(rerun.out, nullptr, false).value("attempt", 0), 2);
}

TEST_F(CliRemoteTest, ARefusalIsExit1WithTheServersMessageAndAKeyActsOnce) {
  CliResult missing = cli({"job", "show", "nope"});
  ASSERT_EQ(cli({"job", "enqueue", "--kind", "k", "--target", "t", "--id", "j1"}).code, 0);
  ASSERT_EQ(cli({"job", "cancel", "j1"}).code, 0);
  CliResult first = cli({"job", "rerun", "j1", "--idempotency-key", "rerun-1"});

  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("not found"), std::string::npos) << missing.err;
  EXPECT_NE(missing.err.find("404"), std::string::npos) << missing.err;
  EXPECT_EQ(first.code, 0) << first.err;
  // The same key again is the same answer, not a second attempt.
  CliResult again = cli({"job", "rerun", "j1", "--idempotency-key", "rerun-1"});
  EXPECT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(json::parse(again.out, nullptr, false).value("attempt", 0), 2);
}

TEST_F(CliRemoteTest, BadArgumentsAre64AndAnUnreachableServer69) {
  EXPECT_EQ(run_cli({"job", "list", "--server", "ftp://x"}).code, kExitUsage);
  EXPECT_EQ(run_cli({"job", "enqueue", "--kind", "k"}).code, kExitUsage);
  EXPECT_EQ(cli({"job", "enqueue", "--kind", "k", "--target", "t", "--input", "{not json"}).code,
            kExitUsage);
  EXPECT_EQ(run_cli({"job"}).code, kExitUsage);
  const std::string nobody = "http://127.0.0.1:" + std::to_string(free_port());
  CliResult down = run_cli({"job", "list", "--server", nobody});
  EXPECT_EQ(down.code, kExitUnreachable) << down.err;
  EXPECT_NE(down.err.find("cannot reach"), std::string::npos) << down.err;
}

TEST_F(CliRemoteTest, HoldsArePlacedListedAndReleasedWithTheirEvidence) {
  CliResult placed = cli({"hold", "place", "--target", "shop-a", "--kind",
                          "EXECUTION_STATE_UNKNOWN", "--reason", "lost the reply"});
  ASSERT_EQ(placed.code, 0) << placed.err;
  const std::string id = json::parse(placed.out, nullptr, false).value("id", "");

  CliResult open = cli({"hold", "list", "--open"});
  CliResult without_evidence = cli({"hold", "release", id, "--note", "looked"});
  CliResult released =
      cli({"hold", "release", id, "--note", "the script exited", "--execution-stopped"});
  CliResult open_after = cli({"hold", "list", "--open"});

  ASSERT_EQ(json_lines(open.out).size(), 1u) << open.out;
  EXPECT_EQ(json_lines(open.out)[0].value("id", ""), id);
  EXPECT_EQ(without_evidence.code, 1) << without_evidence.out;
  ASSERT_EQ(released.code, 0) << released.err;
  EXPECT_TRUE(json::parse(released.out, nullptr, false).value("released", false));
  EXPECT_EQ(open_after.out, "");
}

TEST_F(CliRemoteTest, ConnectorsAreCreatedPausedResumedSyncedAndDeleted) {
  ASSERT_EQ(cli({"connector", "create", "--id", "c1", "--name", "shop"}).code, 0);
  CliResult paused = cli({"connector", "pause", "c1"});
  CliResult refused = cli({"connector", "sync", "c1"});
  CliResult resumed = cli({"connector", "resume", "c1"});
  CliResult synced = cli({"connector", "sync", "c1"});
  CliResult aborted = cli({"connector", "abort", "c1"});
  CliResult listed = cli({"connector", "list", "--status", "active"});
  CliResult deleted = cli({"connector", "delete", "c1"});

  EXPECT_EQ(json::parse(paused.out, nullptr, false).value("status", ""), "paused");
  EXPECT_EQ(refused.code, 1);
  EXPECT_NE(refused.err.find("Connector is paused"), std::string::npos) << refused.err;
  EXPECT_EQ(json::parse(resumed.out, nullptr, false).value("status", ""), "active");
  EXPECT_EQ(synced.code, 0) << synced.err;
  EXPECT_EQ(aborted.code, 0) << aborted.err;
  EXPECT_EQ(json_lines(listed.out).size(), 1u) << listed.out;
  EXPECT_EQ(deleted.code, 0) << deleted.err;
}

TEST_F(CliRemoteTest, EventsTailPrintsTheLogAsJsonLinesFromAfter) {
  for (const char* id : {"j1", "j2", "j3"}) {
    ASSERT_EQ(cli({"job", "enqueue", "--kind", "k", "--target", id, "--id", id}).code, 0);
  }
  CliResult tail = cli({"events", "tail", "--after", "1", "--max-events", "2"});
  CliResult typed = cli({"events", "tail", "--type", "JobEnqueued", "--max-events", "3"});

  ASSERT_EQ(tail.code, 0) << tail.err;
  std::vector<json> events = json_lines(tail.out);
  ASSERT_EQ(events.size(), 2u) << tail.out;
  EXPECT_EQ(events[0].value("seq", 0), 2);
  EXPECT_EQ(events[1].value("seq", 0), 3);
  EXPECT_EQ(json_lines(typed.out).size(), 3u) << typed.out;
  // A type no event has is a bad argument, not a wait for ever
  CliResult misspelt = cli({"events", "tail", "--type", "JobEnqueud", "--max-events", "1"});
  EXPECT_EQ(misspelt.code, 64) << misspelt.err;
  EXPECT_NE(misspelt.err.find("no event type is called 'JobEnqueud'"), std::string::npos)
      << misspelt.err;
}

// The server stops and starts again under the tail: it goes on after the
// last seq it printed, with no gap and no duplicate.
TEST_F(CliRemoteTest, EventsTailResumesAcrossARestartWithoutGapOrDuplicate) {
  ASSERT_EQ(cli({"job", "enqueue", "--kind", "k", "--target", "t1", "--id", "j1"}).code, 0);
  TempDir out;
  const pid_t tail = spawn_process(
      {bin_path("runledger"), "events", "tail", "--server", server_->url(), "--max-events", "3"},
      clean_environment(), out.path() + "/out", out.path() + "/err");
  // Long enough for the tail to print the first event.
  for (int i = 0; i < 100 && read_whole_file(out.path() + "/out").empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_FALSE(read_whole_file(out.path() + "/out").empty());
  const int port = server_->port();
  ASSERT_EQ(server_->terminate(), 0);
  server_ = std::make_unique<ServerProcess>(data_.path() + "/data", flags(), port);
  ASSERT_TRUE(server_->wait_ready()) << server_->log();
  ASSERT_EQ(cli({"job", "enqueue", "--kind", "k", "--target", "t2", "--id", "j2"}).code, 0);
  ASSERT_EQ(cli({"job", "enqueue", "--kind", "k", "--target", "t3", "--id", "j3"}).code, 0);

  EXPECT_EQ(wait_for_exit(tail), 0) << read_whole_file(out.path() + "/err");
  std::vector<json> events = json_lines(read_whole_file(out.path() + "/out"));
  ASSERT_EQ(events.size(), 3u);
  for (size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i].value("seq", 0u), i + 1);
}

TEST_F(CliRemoteTest, ATableIsPrintedWhenAsked) {
  ASSERT_EQ(cli({"job", "enqueue", "--kind", "k", "--target", "t", "--id", "j1"}).code, 0);
  CliResult table = run_cli({"job", "list", "--server", server_->url(), "--output", "table"});
  ASSERT_EQ(table.code, 0) << table.err;
  std::vector<std::string> lines = lines_of(table.out);
  ASSERT_EQ(lines.size(), 2u) << table.out;
  EXPECT_EQ(lines[0].rfind("ID", 0), 0u) << table.out;
  EXPECT_NE(lines[1].find("QUEUED"), std::string::npos) << table.out;
  // and one entity as its fields, then its steps as a table of their own
  CliResult shown = run_cli({"job", "show", "j1", "--server", server_->url(), "--output", "table"});
  ASSERT_EQ(shown.code, 0) << shown.err;
  lines = lines_of(shown.out);
  ASSERT_GE(lines.size(), 4u) << shown.out;
  EXPECT_EQ(lines[0].rfind("FIELD", 0), 0u) << shown.out;
  auto has_line = [&](const std::regex& line) {
    return std::any_of(lines.begin(), lines.end(),
                       [&](const std::string& l) { return std::regex_match(l, line); });
  };
  EXPECT_TRUE(has_line(std::regex("state +QUEUED"))) << shown.out;
  EXPECT_TRUE(has_line(std::regex("target +t"))) << shown.out;
  EXPECT_TRUE(has_line(std::regex("steps"))) << shown.out;
  EXPECT_TRUE(has_line(std::regex("NAME +STATE.*"))) << shown.out;
  EXPECT_TRUE(has_line(std::regex("FETCH +PENDING.*"))) << shown.out;
  EXPECT_FALSE(has_line(std::regex(" *[{}\\[\\]],?"))) << "not indented JSON: " << shown.out;
}

TEST(CliCompletion, TheScriptsNameEveryVerbAndItsFlags) {
  CliResult bash = run_cli({"completion", "bash"});
  CliResult zsh = run_cli({"completion", "zsh"});
  ASSERT_EQ(bash.code, 0) << bash.err;
  for (const char* word : {"complete -F _runledger runledger", "\" job\")", "\" job list\")",
                           "--idempotency-key", "\" hold release\")", "--execution-stopped",
                           "\" events tail\")", "--max-events", "replay"}) {
    EXPECT_NE(bash.out.find(word), std::string::npos) << word;
  }
  EXPECT_EQ(zsh.out.rfind("#compdef runledger", 0), 0u);
  EXPECT_EQ(run_cli({"completion", "fish"}).code, kExitUsage);
  // bash itself takes it.
  TempDir dir;
  {
    std::ofstream f(dir.path() + "/c.sh");
    f << bash.out;
  }
  EXPECT_EQ(std::system(("bash -n " + dir.path() + "/c.sh").c_str()), 0);
}

class CliRemoteAuthTest : public CliRemoteTest {
 protected:
  std::vector<std::string> flags() override {
    std::ofstream f(tokens_.path() + "/tokens");
    f << "ana reader reader-token-0123456789\n"
      << "oncall operator operator-token-0123456789\n";
    return {"--auth-tokens", tokens_.path() + "/tokens"};
  }
  std::string token_file(const std::string& token) {
    std::string path = tokens_.path() + "/" + token.substr(0, 4);
    std::ofstream f(path);
    f << token << "\n";
    return path;
  }
  TempDir tokens_;
};

TEST_F(CliRemoteAuthTest, TheTokenComesFromAFileAndItsRoleIsJudged) {
  const std::string reader = token_file("reader-token-0123456789");
  const std::string oncall = token_file("operator-token-0123456789");

  CliResult none = cli({"job", "list"});
  CliResult read = cli({"job", "list", "--token-file", reader});
  CliResult forbidden =
      cli({"job", "enqueue", "--kind", "k", "--target", "t", "--token-file", reader});
  CliResult allowed = run_cli({"job", "enqueue", "--kind", "k", "--target", "t", "--server",
                               server_->url(), "--output", "json"},
                              {"RUNLEDGER_TOKEN_FILE=" + oncall});

  EXPECT_EQ(none.code, 1);
  EXPECT_NE(none.err.find("401"), std::string::npos) << none.err;
  EXPECT_EQ(read.code, 0) << read.err;
  EXPECT_EQ(forbidden.code, 1);
  EXPECT_NE(forbidden.err.find("403"), std::string::npos) << forbidden.err;
  EXPECT_EQ(allowed.code, 0) << allowed.err;
  EXPECT_EQ(json::parse(allowed.out, nullptr, false).value("state", ""), "QUEUED");
}

}  // namespace
}  // namespace runledger::testing

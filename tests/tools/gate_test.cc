// runledger gate against a real runledgerd on a free loopback port: exit 0
// when new work may start, 76 with the reasons when not, 69 when the server
// cannot be reached; and the same answers read from a data folder.
#include <gtest/gtest.h>
#include <httplib.h>

#include "tests/tools/tools_test_support.h"

namespace runledger::testing {
namespace {

constexpr int kExitMayStart = 0;

TEST(Gate, AnswersFromARunningServer) {
  TempDir data;
  ServerProcess server(data.path());
  ASSERT_TRUE(server.wait_ready()) << server.log();

  CliResult open = run_cli({"gate", "t1", "--server", server.url()});
  EXPECT_EQ(open.code, kExitMayStart) << open.out << open.err;
  EXPECT_NE(open.out.find("may start: t1"), std::string::npos) << open.out;

  httplib::Client client("127.0.0.1", server.port());
  auto placed = client.Post(
      "/v1/holds", R"({"target": "t1", "kind": "EXECUTION_STATE_UNKNOWN", "reason": "manual run"})",
      "application/json");
  ASSERT_TRUE(placed) << "the server did not answer";
  ASSERT_EQ(placed->status, 201) << placed->body;
  const std::string hold = nlohmann::json::parse(placed->body).at("id");

  CliResult closed = run_cli({"gate", "t1", "--server", server.url()});
  EXPECT_EQ(closed.code, kExitGateClosed) << closed.out << closed.err;
  EXPECT_NE(closed.out.find("hold " + hold + " (EXECUTION_STATE_UNKNOWN) blocks target t1"),
            std::string::npos)
      << closed.out;

  // The server's default comes from $RUNLEDGER_SERVER.
  CliResult from_env = run_cli({"gate", "t1"}, {"RUNLEDGER_SERVER=" + server.url()});
  EXPECT_EQ(from_env.code, kExitGateClosed) << from_env.out << from_env.err;

  // The data folder gives the same answer, also while the server runs.
  CliResult from_folder = run_cli({"gate", "t1", "--data", data.path()});
  EXPECT_EQ(from_folder.code, kExitGateClosed) << from_folder.out << from_folder.err;
  EXPECT_EQ(from_folder.out, closed.out);

  ASSERT_EQ(server.terminate(), 0) << server.log();
  CliResult gone = run_cli({"gate", "t1", "--server", server.url()});
  EXPECT_EQ(gone.code, kExitUnreachable) << gone.out << gone.err;
  EXPECT_NE(gone.err.find("cannot reach the server"), std::string::npos) << gone.err;
}

TEST(Gate, ATargetHoldingASlashIsAskedForAsOneSegment) {
  TempDir data;
  ServerProcess server(data.path());
  ASSERT_TRUE(server.wait_ready()) << server.log();
  httplib::Client client("127.0.0.1", server.port());
  auto placed = client.Post(
      "/v1/holds",
      R"({"target": "db/orders", "kind": "EXECUTION_STATE_UNKNOWN", "reason": "manual run"})",
      "application/json");
  ASSERT_TRUE(placed) << "the server did not answer";
  ASSERT_EQ(placed->status, 201) << placed->body;
  CliResult held = run_cli({"gate", "db/orders", "--server", server.url()});
  EXPECT_EQ(held.code, kExitGateClosed) << held.out << held.err;
  EXPECT_NE(held.out.find("blocks target db/orders"), std::string::npos) << held.out;
  CliResult other = run_cli({"gate", "db/customers", "--server", server.url()});
  EXPECT_EQ(other.code, kExitMayStart) << other.out << other.err;
}

TEST(Gate, AnActiveAttemptClosesTheGateOfItsTarget) {
  EngineRig rig;
  rig.run(enqueue("j1", "t1"));
  rig.run(claim("j1", "w1", "token-1"));
  CliResult r = run_cli({"gate", "t1", "--data", rig.data()});
  EXPECT_EQ(r.code, kExitGateClosed) << r.out << r.err;
  EXPECT_NE(r.out.find("job j1 is LEASED on target t1"), std::string::npos) << r.out;
  CliResult other = run_cli({"gate", "t2", "--data", rig.data()});
  EXPECT_EQ(other.code, kExitMayStart) << other.out << other.err;
}

TEST(Gate, BadArgumentsExit64) {
  EXPECT_EQ(run_cli({"gate"}).code, kExitUsage);
  EXPECT_EQ(run_cli({"gate", "t1", "--server", "ftp://127.0.0.1:1"}).code, kExitUsage);
  EXPECT_EQ(run_cli({"gate", "t1", "--server", "http://127.0.0.1:1/v1"}).code, kExitUsage);
  EXPECT_EQ(run_cli({"gate", "t1", "--server", "http://127.0.0.1:1", "--data", "/tmp"}).code,
            kExitUsage);
}

}  // namespace
}  // namespace runledger::testing

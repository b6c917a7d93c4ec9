// Authentication over HTTP (docs/operations.md "Authentication", docs/api.md 401/403):
// with --auth-tokens a request without a valid bearer token is 401, a role
// that may not make the call is 403, and neither changes anything; the
// token's name is the actor of the events its requests cause. Without
// tokens the server refuses to listen anywhere but loopback.
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/http/job_calls.h"
#include "tests/http/raw_connection.h"
#include "tests/http/server_fixture.h"
#include "tests/support/subprocess.h"

namespace runledger::testing {
namespace {

using nlohmann::json;

constexpr char kReaderToken[] = "reader-token-0123456789abcdef";
constexpr char kWorkerToken[] = "worker-token-0123456789abcdef";
constexpr char kOperatorToken[] = "operator-token-0123456789abcdef";

Headers bearer(const std::string& token) { return {{"Authorization", "Bearer " + token}}; }

class AuthTest : public ServerTest {
 protected:
  std::vector<std::string> initial_flags() const override {
    std::ofstream f(tokens_.path() + "/tokens");
    f << "# name role token\n"
      << "ana reader " << kReaderToken << "\n"
      << "\n"
      << "loader-7 worker " << kWorkerToken << "\n"
      << "oncall operator " << kOperatorToken << "\n";
    return {"--auth-tokens", tokens_.path() + "/tokens"};
  }

  // The type and actor of the newest event in the log, read as the operator.
  std::pair<std::string, std::string> last_event() {
    ApiReply r = client().get("/v1/events?after=0&limit=1000", bearer(kOperatorToken));
    EXPECT_EQ(r.status, 200) << r.body;
    const json& events = r.json["events"];
    if (!events.is_array() || events.empty()) return {"", ""};
    return {events.back().value("type", ""), events.back().value("actor", "")};
  }

  size_t event_count() {
    ApiReply r = client().get("/v1/events?after=0&limit=1000", bearer(kOperatorToken));
    return r.json.contains("events") ? r.json["events"].size() : 0;
  }

 private:
  TempDir tokens_;
};

TEST_F(AuthTest, ARequestWithoutATokenIs401AndChangesNothing) {
  const size_t before = event_count();
  EXPECT_TRUE(IsError(client().get("/v1/jobs"), 401, "unauthorized"));
  EXPECT_TRUE(IsError(client().post("/v1/jobs", {{"id", "j1"}, {"kind", "k"}, {"target", "t"}}),
                      401, "unauthorized"));
  EXPECT_EQ(event_count(), before);
  EXPECT_TRUE(IsError(client().get("/v1/jobs/j1", bearer(kOperatorToken)), 404, "not_found"));
}

TEST_F(AuthTest, AnUnknownTokenOrAnotherSchemeIs401) {
  EXPECT_TRUE(
      IsError(client().get("/v1/jobs", bearer("not-a-token-0123456789")), 401, "unauthorized"));
  EXPECT_TRUE(
      IsError(client().get("/v1/jobs", {{"Authorization", kOperatorToken}}), 401, "unauthorized"));
  EXPECT_TRUE(
      IsError(client().get("/v1/jobs", {{"Authorization", std::string("Basic ") + kOperatorToken}}),
              401, "unauthorized"));
}

TEST_F(AuthTest, HealthAnswersWithoutAToken) { EXPECT_EQ(client().get("/v1/health").status, 200); }

TEST_F(AuthTest, WhoamiNamesEachTokensCallerAndRoleAndWantsAToken) {
  EXPECT_EQ(client().get("/v1/whoami").status, 401);
  const std::vector<std::tuple<std::string, std::string, std::string>> tokens = {
      {kReaderToken, "ana", "reader"},
      {kWorkerToken, "loader-7", "worker"},
      {kOperatorToken, "oncall", "operator"}};
  for (const auto& [token, name, role] : tokens) {
    ApiReply r = client().get("/v1/whoami", bearer(token));
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json, json({{"name", name}, {"role", role}, {"authenticated", true}}));
  }
}

TEST_F(AuthTest, HealthAnswersWithoutATokenHoweverItsPathIsSpelled) {
  EXPECT_EQ(client().get("/v1/%68ealth").status, 200);
  EXPECT_EQ(client().get("//v1//health").status, 200);
  // Another method on it is refused for what it is, not for the token.
  EXPECT_TRUE(IsError(client().del("/v1/%68ealth"), 405, "method_not_allowed"));
  // Other paths still need one.
  EXPECT_TRUE(IsError(client().get("/v1/%68ealth/x"), 401, "unauthorized"));
}

// The role check reads the path as the router does: a worker reaches the
// worker calls however they are spelled, and nothing else.
TEST_F(AuthTest, AWorkerIsJudgedByTheRouteItsPathNamesNotByItsSpelling) {
  ASSERT_TRUE(IsStatus(client().post("/v1/jobs", {{"id", "j1"}, {"kind", "k"}, {"target", "t"}},
                                     bearer(kOperatorToken)),
                       201));
  const size_t before = event_count();
  // The cancel route, spelled three ways: refused each time.
  for (const char* path : {"/v1/jobs/j1/cancel", "/v1/jobs/j1/%63ancel", "/v1//jobs/j1/cancel/"}) {
    EXPECT_TRUE(
        IsError(client().post(path, json::object(), bearer(kWorkerToken)), 403, "forbidden"))
        << path;
  }
  EXPECT_EQ(event_count(), before);
  // The claim route, spelled with an encoded letter and a doubled slash:
  // allowed, and it leases the job.
  ApiReply claimed = client().post("/v1//jobs/%63laim", {{"worker", "w"}}, bearer(kWorkerToken));
  ASSERT_TRUE(IsStatus(claimed, 200));
  // The start route, its last letter encoded: allowed too.
  EXPECT_TRUE(IsStatus(
      client().post("/v1/jobs/j1/star%74", {{"lease_token", claimed.json.value("lease_token", "")}},
                    bearer(kWorkerToken)),
      200));
  EXPECT_EQ(last_event(), std::make_pair(std::string("JobStarted"), std::string("loader-7")));
}

TEST_F(AuthTest, AReaderMayReadButNotWrite) {
  ASSERT_TRUE(IsStatus(client().get("/v1/jobs", bearer(kReaderToken)), 200));
  const size_t before = event_count();
  EXPECT_TRUE(IsError(client().post("/v1/jobs", {{"id", "j1"}, {"kind", "k"}, {"target", "t"}},
                                    bearer(kReaderToken)),
                      403, "forbidden"));
  EXPECT_TRUE(IsError(client().post("/v1/jobs/claim", {{"worker", "w"}}, bearer(kReaderToken)), 403,
                      "forbidden"));
  EXPECT_EQ(event_count(), before);
}

TEST_F(AuthTest, AWorkerMayClaimButNotEnqueueOrPlaceHolds) {
  const size_t before = event_count();
  EXPECT_TRUE(IsError(client().post("/v1/jobs", {{"id", "j1"}, {"kind", "k"}, {"target", "t"}},
                                    bearer(kWorkerToken)),
                      403, "forbidden"));
  EXPECT_TRUE(
      IsError(client().post("/v1/holds",
                            {{"target", "t"}, {"kind", "EXECUTION_STATE_UNKNOWN"}, {"reason", "r"}},
                            bearer(kWorkerToken)),
              403, "forbidden"));
  EXPECT_EQ(event_count(), before);
  // Nothing is ready: the claim itself is allowed.
  EXPECT_EQ(client().post("/v1/jobs/claim", {{"worker", "w"}}, bearer(kWorkerToken)).status, 204);
}

TEST_F(AuthTest, EachEventNamesTheTokenThatCausedItAsItsActor) {
  // Given a job enqueued by the operator
  ASSERT_TRUE(IsStatus(client().post("/v1/jobs", {{"id", "j1"}, {"kind", "k"}, {"target", "t"}},
                                     bearer(kOperatorToken)),
                       201));
  EXPECT_EQ(last_event(), std::make_pair(std::string("JobEnqueued"), std::string("oncall")));
  // When the worker claims it
  ApiReply claimed = client().post("/v1/jobs/claim", {{"worker", "w"}}, bearer(kWorkerToken));
  ASSERT_TRUE(IsStatus(claimed, 200));
  // Then the lease event names the worker's token, not the worker field
  EXPECT_EQ(last_event().second, "loader-7");
  // And the worker's own calls on its lease are allowed
  const std::string token = claimed.json.value("lease_token", "");
  EXPECT_TRUE(IsStatus(
      client().post("/v1/jobs/j1/start", {{"lease_token", token}}, bearer(kWorkerToken)), 200));
  EXPECT_EQ(last_event().second, "loader-7");
  // And the operator's cancel is recorded as the operator's
  EXPECT_EQ(client().post("/v1/jobs/j1/cancel", json::object(), bearer(kOperatorToken)).status,
            202);
  EXPECT_EQ(last_event().second, "oncall");
}

TEST_F(AuthTest, AWorkerMayYieldItsLeaseAndAReaderMayNot) {
  ASSERT_TRUE(IsStatus(client().post("/v1/jobs", {{"id", "j1"}, {"kind", "k"}, {"target", "t"}},
                                     bearer(kOperatorToken)),
                       201));
  ApiReply claimed = client().post("/v1/jobs/claim", {{"worker", "w"}}, bearer(kWorkerToken));
  ASSERT_TRUE(IsStatus(claimed, 200));
  const json lease = {{"lease_token", claimed.json.value("lease_token", "")}};
  ASSERT_TRUE(IsStatus(client().post("/v1/jobs/j1/start", lease, bearer(kWorkerToken)), 200));
  const size_t before = event_count();
  EXPECT_TRUE(
      IsError(client().post("/v1/jobs/j1/yield", lease, bearer(kReaderToken)), 403, "forbidden"));
  EXPECT_EQ(event_count(), before);
  EXPECT_TRUE(IsStatus(client().post("/v1/jobs/j1/yield", lease, bearer(kWorkerToken)), 200));
  EXPECT_EQ(last_event(), std::make_pair(std::string("AttemptYielded"), std::string("loader-7")));
}

TEST(AuthStartTest, WithoutTokensTheServerRefusesToListenBeyondLoopback) {
  TempDir data;
  auto [code, out] =
      run_shell(bin_path("runledgerd") + " --listen 0.0.0.0:" + std::to_string(free_port()) +
                " --data " + data.path());
  EXPECT_NE(code, 0);
  EXPECT_NE(out.find("--auth-tokens"), std::string::npos) << out;
}

TEST_F(AuthTest, TheSchemeIsCaseBlindAndMaySpaceItsToken) {
  for (const std::string scheme : {"bearer ", "BEARER ", "bEaReR   "}) {
    EXPECT_EQ(client().get("/v1/jobs", {{"Authorization", scheme + kReaderToken}}).status, 200)
        << scheme;
  }
  EXPECT_TRUE(
      IsError(client().get("/v1/jobs", {{"Authorization", std::string("Bearer") + kReaderToken}}),
              401, "unauthorized"));
}

TEST_F(AuthTest, TwoAuthorizationFieldsAre400AndChangeNothing) {
  RawConnection conn(server().port(), deadline_in(kReplyWait));
  ASSERT_TRUE(conn.connected());
  const std::string body = R"({"id":"j1","kind":"k","target":"t1"})";
  ASSERT_TRUE(
      conn.send_all(request_head("POST", "/v1/jobs",
                                 std::string("Authorization: Bearer ") + kReaderToken +
                                     "\r\nAuthorization: Bearer " + kOperatorToken +
                                     "\r\nContent-Type: application/json\r\nContent-Length: " +
                                     std::to_string(body.size()) + "\r\n") +
                        body,
                    deadline_in(kReplyWait)));
  std::string response;
  conn.read_response(&response, deadline_in(kReplyWait));

  EXPECT_EQ(status_of(response), 400) << response;
  EXPECT_TRUE(IsError(client().get("/v1/jobs/j1", bearer(kOperatorToken)), 404, "not_found"));
}

// Runs runledgerd with the tokens file `text`: its exit code and output,
// and whether it created its data folder.
struct TokensStart {
  int code;
  std::string out;
  bool data_made;
};
TokensStart start_with_tokens(const std::string& text, int mode = 0600) {
  TempDir dir;
  const std::string tokens = dir.path() + "/tokens";
  {
    std::ofstream f(tokens);
    f << text;
  }
  ::chmod(tokens.c_str(), static_cast<mode_t>(mode));
  auto [code, out] = run_shell("timeout 20 " + bin_path("runledgerd") +
                               " --listen 127.0.0.1:" + std::to_string(free_port()) + " --data " +
                               dir.path() + "/data --auth-tokens " + tokens);
  return {code, out, std::filesystem::exists(dir.path() + "/data")};
}

TEST(AuthStartTest, ATokenOrANameGivenTwiceStopsTheStartBeforeTheDataFolder) {
  const std::string token = "one-token-0123456789abcdef";
  TokensStart same_token =
      start_with_tokens("ana reader " + token + "\nbob operator " + token + "\n");
  TokensStart same_name = start_with_tokens(
      "ana reader reader-token-0123456789\nana operator operator-token-0123456789\n");

  EXPECT_EQ(same_token.code, 2) << same_token.out;
  EXPECT_NE(same_token.out.find(":2: this token is given on an earlier line"), std::string::npos)
      << same_token.out;
  EXPECT_FALSE(same_token.data_made);
  EXPECT_EQ(same_name.code, 2) << same_name.out;
  EXPECT_NE(same_name.out.find(":2: the name ana"), std::string::npos) << same_name.out;
  EXPECT_FALSE(same_name.data_made);
}

TEST(AuthStartTest, AShortTokenStopsTheStartWithExit2BeforeTheDataFolder) {
  TokensStart s = start_with_tokens("ana reader short\n");
  EXPECT_EQ(s.code, 2) << s.out;
  EXPECT_FALSE(s.data_made);
}

TEST(AuthStartTest, ATokensFileOthersMayReadIsWarnedAbout) {
  TempDir dir;
  const std::string tokens = dir.path() + "/tokens";
  {
    std::ofstream f(tokens);
    f << "ana reader " << kReaderToken << "\n";
  }
  ::chmod(tokens.c_str(), 0644);
  ServerProcess server(dir.path() + "/data", {"--auth-tokens", tokens});
  ASSERT_TRUE(server.wait_ready()) << server.log();
  EXPECT_NE(server.log().find("may be read by others"), std::string::npos) << server.log();
  EXPECT_EQ(server.terminate(), 0);
}

}  // namespace
}  // namespace runledger::testing

// Kept replies belong to their caller and keep no secret in clear, on a
// real runledgerd (docs/api.md "Idempotency", docs/operations.md "What the
// data folder holds"): another caller's retry of a key is 409 and learns nothing; no
// lease token nor idempotency key can be found in the bytes of the data
// folder, yet the caller's own retry gets its token back, also after a
// restart; the folder is 0700 and its files 0600.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/http/job_calls.h"
#include "tests/http/server_fixture.h"

namespace runledger::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr char kW1Token[] = "first-worker-token-0123456789";
constexpr char kW2Token[] = "second-worker-token-0123456789";
constexpr char kOncallToken[] = "operator-token-0123456789abcdef";

Headers as(const std::string& token, const std::string& key = "") {
  Headers h = {{"Authorization", "Bearer " + token}};
  if (!key.empty()) h.emplace_back("Idempotency-Key", key);
  return h;
}

// The files under `dir` that hold `needle` anywhere in their bytes, as
// `grep -a -r` would find them.
std::vector<std::string> files_holding(const std::string& dir, const std::string& needle) {
  std::vector<std::string> found;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    if (bytes.str().find(needle) != std::string::npos) found.push_back(entry.path().string());
  }
  return found;
}

class IdempotencyScopeTest : public ServerTest {
 protected:
  std::vector<std::string> initial_flags() const override {
    std::ofstream f(tokens_.path() + "/tokens");
    f << "w1 worker " << kW1Token << "\n"
      << "w2 worker " << kW2Token << "\n"
      << "oncall operator " << kOncallToken << "\n";
    return {"--auth-tokens", tokens_.path() + "/tokens"};
  }
  void enqueue_two() {
    for (const std::string id : {"j1", "j2"}) {
      ASSERT_TRUE(
          IsStatus(client().post("/v1/jobs", {{"id", id}, {"kind", "k"}, {"target", id}},
                                 {{"Authorization", std::string("Bearer ") + kOncallToken}}),
                   201));
    }
  }
  TempDir tokens_;
};

const json kClaim = {{"worker", "w1"}, {"kinds", {"k"}}, {"lease_s", kTestLeaseS}};

TEST_F(IdempotencyScopeTest, AnotherCallersRetryOfAKeyIs409AndLearnsNothing) {
  enqueue_two();
  ApiReply first = client().post("/v1/jobs/claim", kClaim, as(kW1Token, "claim-1"));
  ASSERT_TRUE(IsStatus(first, 200));
  const std::string token = token_of(first);
  ASSERT_FALSE(token.empty());

  ApiReply other = client().post("/v1/jobs/claim", kClaim, as(kW2Token, "claim-1"));
  ApiReply own = client().post("/v1/jobs/claim", kClaim, as(kW1Token, "claim-1"));

  EXPECT_TRUE(IsError(other, 409, "idempotency_key_reused"));
  EXPECT_EQ(other.body.find(token), std::string::npos) << other.body;
  EXPECT_EQ(other.body.find("j1"), std::string::npos) << other.body;
  EXPECT_EQ(own.status, 200);
  EXPECT_EQ(own.body, first.body);
  // The other caller's 409 claimed nothing either.
  EXPECT_EQ(client().get("/v1/jobs/j2", as(kOncallToken)).json.value("state", ""), "QUEUED");
}

TEST_F(IdempotencyScopeTest, NoLeaseTokenOrKeyIsKeptInClearYetTheRetryGetsItsTokenBack) {
  enqueue_two();
  const std::string key = "claim-key-4f1c9a2e7b";
  ApiReply first = client().post("/v1/jobs/claim", kClaim, as(kW1Token, key));
  ASSERT_TRUE(IsStatus(first, 200));
  const std::string token = token_of(first);
  ASSERT_EQ(token.size(), 32u);

  EXPECT_EQ(files_holding(data(), token), std::vector<std::string>{});
  EXPECT_EQ(files_holding(data(), key), std::vector<std::string>{});

  ASSERT_NO_FATAL_FAILURE(restart(initial_flags()));
  EXPECT_EQ(files_holding(data(), token), std::vector<std::string>{});
  ApiReply again = client().post("/v1/jobs/claim", kClaim, as(kW1Token, key));
  EXPECT_EQ(again.status, 200);
  EXPECT_EQ(again.body, first.body);
}

TEST_F(IdempotencyScopeTest, AReattachTokenIsNotKeptInClearEither) {
  enqueue_two();
  ApiReply claimed = client().post("/v1/jobs/claim", kClaim, as(kW1Token, "c-1"));
  ASSERT_TRUE(IsStatus(claimed, 200));
  const std::string job = claimed.json["job"].value("id", "");
  ASSERT_TRUE(
      IsStatus(client().post("/v1/jobs/" + job + "/start",
                             {{"lease_token", token_of(claimed)}, {"execution_handle", "pid-42"}},
                             as(kW1Token)),
               200));
  const json reattach = {{"worker", "w1"}, {"execution_handle", "pid-42"}, {"observed", "running"}};
  const std::string key = "reattach-key-8d0b3c";

  ApiReply first = client().post("/v1/jobs/" + job + "/reattach", reattach, as(kW1Token, key));
  ASSERT_TRUE(IsStatus(first, 200));
  const std::string token = token_of(first);
  ASSERT_EQ(token.size(), 32u);

  EXPECT_EQ(files_holding(data(), token), std::vector<std::string>{});
  ApiReply again = client().post("/v1/jobs/" + job + "/reattach", reattach, as(kW1Token, key));
  EXPECT_EQ(again.body, first.body);
}

// Without authentication every caller is one ("anonymous"), whatever actor
// it names: the retry of a worker that names itself differently replays.
TEST(IdempotencyWithoutAuth, EveryCallerIsOneWhateverActorItNames) {
  TempDir folder;
  ServerProcess server(folder.path());
  ASSERT_TRUE(server.wait_ready()) << server.log();
  ApiClient c(server.port());
  ASSERT_TRUE(IsStatus(enqueue(c, "j1", "t1", "k"), 201));
  ApiReply first =
      c.post("/v1/jobs/claim", kClaim, {{"Idempotency-Key", "k-1"}, {"X-Runledger-Actor", "ana"}});
  ASSERT_TRUE(IsStatus(first, 200));

  ApiReply again =
      c.post("/v1/jobs/claim", kClaim, {{"Idempotency-Key", "k-1"}, {"X-Runledger-Actor", "bob"}});

  EXPECT_EQ(again.body, first.body);
  EXPECT_EQ(server.terminate(), 0) << server.log();
}

// Every mode bit of group and others clear.
::testing::AssertionResult OwnerOnly(const fs::path& p) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) return ::testing::AssertionFailure() << "no " << p;
  if ((st.st_mode & 077) != 0) {
    return ::testing::AssertionFailure() << p << " has mode " << std::oct << (st.st_mode & 07777);
  }
  return ::testing::AssertionSuccess();
}

void expect_private(const std::string& dir) {
  EXPECT_TRUE(OwnerOnly(dir));
  size_t files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    EXPECT_TRUE(OwnerOnly(entry.path()));
    ++files;
  }
  EXPECT_GT(files, 3u);
}

TEST(DataFolder, IsItsOwnersAloneAndAnOlderOneIsClosedAtStart) {
  TempDir parent;
  const std::string data = parent.path() + "/data";
  {
    ServerProcess server(data);
    ASSERT_TRUE(server.wait_ready()) << server.log();
    ApiClient c(server.port());
    ASSERT_TRUE(IsStatus(enqueue(c, "j1", "t1", "k"), 201));
    expect_private(data);
    ASSERT_EQ(server.terminate(), 0) << server.log();
  }
  // As an earlier version left it.
  fs::permissions(data, fs::perms(0755));
  for (const auto& entry : fs::recursive_directory_iterator(data)) {
    fs::permissions(entry.path(), entry.is_directory() ? fs::perms(0755) : fs::perms(0644));
  }

  ServerProcess again(data);
  ASSERT_TRUE(again.wait_ready()) << again.log();
  expect_private(data);
  EXPECT_EQ(again.terminate(), 0) << again.log();
}

}  // namespace
}  // namespace runledger::testing

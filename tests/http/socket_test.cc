// Socket behaviour of a real runledgerd (docs/operations.md "The server", docs/performance.md
// "Bad input"): a second server never shares a port or a data folder and
// says why it cannot start; idle keep-alive connections and slow clients do
// not keep others waiting; a burst of connections is answered or refused
// cleanly. Counts and durations are bounded, on loopback only.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/http/job_calls.h"
#include "tests/http/raw_connection.h"
#include "tests/http/server_fixture.h"

namespace runledger::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr size_t kIdleConnections = 16;
constexpr size_t kSlowConnections = 16;
constexpr size_t kBurstConnections = 500;
constexpr auto kSlowByteInterval = 2s;
constexpr int kSlowBytesSent = 5;  // one every 2 s: the slow clients last ~10 s
constexpr auto kProbeInterval = 500ms;
constexpr int kIdleProbes = 4;
// Probes that must run while the slow clients dribble (~10 s / 0.5 s).
constexpr int kSlowProbesMin = 5;
constexpr size_t kIdempotencyKeyCharsMax = 128;
// How long a request may take while others misbehave: generous on a shared
// 2-core machine, far below the server's 5 s read timeout a starved request
// would wait for.
constexpr auto kAnswerBound = 3s;
// Far more than a server that accepts its connections needs (well under a
// second here); less than a connection dropped from a full listen queue
// would wait.
constexpr auto kBurstWait = 45s;

// A fresh connection's request, timed.
Clock::duration timed_health(int port, int* status) {
  auto start = Clock::now();
  ApiClient fresh(port);
  *status = fresh.get("/v1/health").status;
  return Clock::now() - start;
}

using SocketTest = ServerTest;

TEST_F(SocketTest, SecondServerOnTheSamePortFailsAndSaysWhy) {
  TempDir other_data;
  const std::string folder = other_data.path() + "/data";
  ServerProcess second(folder, {}, server().port());

  auto code = second.wait_exit(ServerProcess::kReadyWait);
  ASSERT_TRUE(code.has_value()) << "the second server did not stop: " << second.log();
  EXPECT_NE(*code, 0);
  const std::string log = second.log();
  EXPECT_NE(log.find("127.0.0.1:" + std::to_string(server().port())), std::string::npos) << log;
  const std::string lower = lowercase(log);
  EXPECT_TRUE(lower.find("in use") != std::string::npos ||
              lower.find("another server") != std::string::npos)
      << log;
  // It stopped before its data folder was made, let alone replayed or
  // written to.
  EXPECT_FALSE(std::filesystem::exists(folder)) << log;
  EXPECT_TRUE(IsStatus(client().get("/v1/health"), 200));
}

TEST_F(SocketTest, SecondServerOnTheSameDataFolderFailsAndSaysWhy) {
  ASSERT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
  ServerProcess second(data());

  auto code = second.wait_exit(ServerProcess::kReadyWait);
  ASSERT_TRUE(code.has_value()) << "the second server did not stop: " << second.log();
  EXPECT_NE(*code, 0);
  const std::string log = second.log();
  EXPECT_NE(log.find(data()), std::string::npos) << log;
  EXPECT_NE(lowercase(log).find("lock"), std::string::npos) << log;
  // The first server is untouched and still writes.
  EXPECT_TRUE(IsStatus(enqueue(client(), "j2", "t2", "k"), 201));
  EXPECT_EQ(job_view(client(), "j1").value("state", ""), "QUEUED");
}

TEST_F(SocketTest, IdleKeepAliveConnectionsDoNotDelayOthers) {
  std::vector<std::unique_ptr<RawConnection>> idle;
  for (size_t i = 0; i < kIdleConnections; ++i) {
    auto conn = std::make_unique<RawConnection>(server().port(), deadline_in(kReplyWait));
    ASSERT_TRUE(conn->connected()) << i;
    ASSERT_TRUE(conn->send_all(request_head("GET", "/v1/health", "Connection: keep-alive\r\n"),
                               deadline_in(kReplyWait)));
    std::string response;
    ASSERT_EQ(conn->read_response(&response, deadline_in(kReplyWait)),
              RawConnection::ReadEnd::kDone);
    ASSERT_EQ(status_of(response), 200) << response;
    idle.push_back(std::move(conn));  // open, idle, kept alive
  }

  for (int probe = 0; probe < kIdleProbes; ++probe) {
    int status = 0;
    auto took = timed_health(server().port(), &status);
    EXPECT_EQ(status, 200) << "probe " << probe;
    EXPECT_LT(took, kAnswerBound) << "probe " << probe;
    std::this_thread::sleep_for(kProbeInterval);
  }
  auto start = Clock::now();
  EXPECT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
  EXPECT_LT(Clock::now() - start, kAnswerBound);
}

TEST_F(SocketTest, SlowClientsSendingOneHeaderByteEveryTwoSecondsDoNotDelayOthers) {
  std::vector<std::unique_ptr<RawConnection>> slow;
  for (size_t i = 0; i < kSlowConnections; ++i) {
    slow.push_back(std::make_unique<RawConnection>(server().port(), deadline_in(kReplyWait)));
    ASSERT_TRUE(slow.back()->connected()) << i;
  }
  std::atomic<bool> done{false};
  std::thread dribble([&] {
    const std::string request = request_head("GET", "/v1/health");
    for (int b = 0; b < kSlowBytesSent; ++b) {
      for (auto& c : slow) c->send_all(request.substr(b, 1), deadline_in(1s));
      std::this_thread::sleep_for(kSlowByteInterval);
    }
    done = true;
  });

  int probes = 0;
  while (!done) {
    int status = 0;
    auto took = timed_health(server().port(), &status);
    EXPECT_EQ(status, 200) << "probe " << probes;
    EXPECT_LT(took, kAnswerBound) << "probe " << probes;
    ++probes;
    std::this_thread::sleep_for(kProbeInterval);
  }
  dribble.join();
  EXPECT_GE(probes, kSlowProbesMin);  // the probes really ran while the slow clients did
  auto start = Clock::now();
  EXPECT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
  EXPECT_LT(Clock::now() - start, kAnswerBound);
}

struct BurstCounts {
  size_t answered = 0;  // a whole reply: 200, or 503 when the server sheds load
  size_t shed = 0;      // of those, 503
  size_t refused = 0;   // refused at connect, or closed without a byte
  size_t hung = 0;      // connected and sent, then neither a reply nor a close
};

// Starts `count` connections at once, each sending one request, and sorts
// what became of them.
BurstCounts burst_of(int port, size_t count) {
  std::vector<std::unique_ptr<RawConnection>> burst;
  for (size_t i = 0; i < count; ++i) burst.push_back(std::make_unique<RawConnection>(port));
  const Deadline deadline = deadline_in(kBurstWait);
  const std::string request = request_head("GET", "/v1/health", "Connection: close\r\n");
  BurstCounts c;
  std::vector<bool> sent(burst.size(), false);
  for (size_t i = 0; i < burst.size(); ++i) {
    if (burst[i]->wait_connected(deadline)) sent[i] = burst[i]->send_all(request, deadline);
  }
  for (size_t i = 0; i < burst.size(); ++i) {
    SCOPED_TRACE("connection " + std::to_string(i));
    if (!sent[i]) {
      // Refused at connect, or reset while sending; a connect still pending
      // at the deadline is a hang.
      bool refused_cleanly = burst[i]->connected() || burst[i]->connect_errno() != 0;
      (refused_cleanly ? c.refused : c.hung) += 1;
      continue;
    }
    std::string response;
    auto end = burst[i]->read_response(&response, deadline);
    if (end == RawConnection::ReadEnd::kTimeout) {
      ++c.hung;
    } else if (end == RawConnection::ReadEnd::kDone) {
      int status = status_of(response);
      EXPECT_TRUE(status == 200 || status == 503) << response;
      ++c.answered;
      if (status == 503) ++c.shed;
    } else {
      EXPECT_TRUE(response.empty()) << "a reply cut short: " << response;
      ++c.refused;
    }
  }
  return c;
}

void expect_clean(const BurstCounts& c, size_t count) {
  EXPECT_EQ(c.hung, 0u) << c.hung << " of " << count << " connections were left hanging (answered "
                        << c.answered << ", refused " << c.refused
                        << "): connected with the request sent, "
                        << "then neither a reply nor a close within the deadline";
  EXPECT_EQ(c.answered + c.refused + c.hung, count);
  EXPECT_GT(c.answered, 0u);
}

// Each of 500 connections, started at once, either gets a whole HTTP reply
// (200, or 503 when the server sheds load) or is refused or closed without a
// byte; none is left hanging, and the server serves normally afterwards.
TEST_F(SocketTest, BurstOf500ConnectionsIsAnsweredOrRefusedCleanly) {
  BurstCounts c = burst_of(server().port(), kBurstConnections);
  RecordProperty("answered", static_cast<int>(c.answered));
  RecordProperty("refused", static_cast<int>(c.refused));
  expect_clean(c, kBurstConnections);

  int status = 0;
  auto took = timed_health(server().port(), &status);
  EXPECT_EQ(status, 200);
  EXPECT_LT(took, kAnswerBound);
}

// With few file descriptors (512) the server serves what fits beside its
// store's files, answers 503 to the next ones and closes the rest at once:
// no connection waits in the listen queue for a descriptor.
TEST(SocketLimitTest, WithFewFileDescriptorsABurstIsShedCleanly) {
  constexpr const char* kPrlimit = "/usr/bin/prlimit";
  ASSERT_EQ(access(kPrlimit, X_OK), 0) << kPrlimit << " (util-linux, essential on Debian)";
  TempDir data;
  ServerProcess server(data.path(), {}, 0, {kPrlimit, "--nofile=512:512"});
  ASSERT_TRUE(server.wait_ready()) << server.log();
  BurstCounts c = burst_of(server.port(), kBurstConnections);
  RecordProperty("answered", static_cast<int>(c.answered));
  RecordProperty("shed", static_cast<int>(c.shed));
  RecordProperty("refused", static_cast<int>(c.refused));
  expect_clean(c, kBurstConnections);
  // 512 descriptors cannot hold 500 connections beside the store's files.
  EXPECT_GT(c.shed + c.refused, 0u);

  ApiClient client(server.port());
  EXPECT_TRUE(IsStatus(client.get("/v1/health"), 200));
  EXPECT_EQ(server.terminate(), 0) << server.log();
}

// A request refused on its headers alone (here a malformed Idempotency-Key)
// must not leave its unread body on a keep-alive connection, where it would
// be read as the next request.
TEST_F(SocketTest, ARequestRefusedOnItsHeadersLeavesTheConnectionInStep) {
  RawConnection conn(server().port(), deadline_in(kReplyWait));
  ASSERT_TRUE(conn.connected());
  const std::string body = R"({"id": "j1", "kind": "k", "target": "t"})";
  ASSERT_TRUE(conn.send_all(
      request_head("POST", "/v1/jobs",
                   "Idempotency-Key: " + std::string(kIdempotencyKeyCharsMax + 1, 'k') +
                       "\r\nContent-Type: application/json\r\nContent-Length: " +
                       std::to_string(body.size()) + "\r\n") +
          body,
      deadline_in(kReplyWait)));
  std::string refused;
  ASSERT_EQ(conn.read_response(&refused, deadline_in(kReplyWait)), RawConnection::ReadEnd::kDone);
  ASSERT_EQ(status_of(refused), 422) << refused;

  // Either the server said it closes this connection, or the next request
  // on it is read as itself.
  if (lowercase(refused).find("connection: close") != std::string::npos) return;
  ASSERT_TRUE(conn.send_all(request_head("GET", "/v1/health"), deadline_in(kReplyWait)));
  std::string next;
  ASSERT_EQ(conn.read_response(&next, deadline_in(kReplyWait)), RawConnection::ReadEnd::kDone)
      << next;
  EXPECT_EQ(status_of(next), 200) << "the refused request's body was read as a request: " << next;
  EXPECT_TRUE(IsError(client().get("/v1/jobs/j1"), 404, "not_found"));
}

}  // namespace
}  // namespace runledger::testing

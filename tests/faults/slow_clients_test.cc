// Slow and many clients (docs/performance.md "Bad input"): connections that dribble
// their request head one byte a second, or stop in the middle of it, held on
// more connections than the server has HTTP threads, a connection that stops
// reading its replies, and a burst of
// connections beyond the thread pool and its queue, must not stop the server
// from answering others. The server runs with the smallest pool it accepts,
// so the limits are reached with few connections; every wait is bounded and
// each assertion is "answered at all within N seconds", not a latency.
#include <atomic>
#include <chrono>
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

// The smallest pool `--http-threads` accepts.
constexpr int kHttpThreads = 2;
// http/server.h: a thread waits this long for the next bytes of a request,
// and as long again for a next request on a connection it answered (the
// library answers a head cut off by the read timeout with a 400 and keeps
// the connection); connections beyond this many waiting get 503 at once.
constexpr auto kServerReadTimeout = 5s;
constexpr auto kServerKeepAliveTimeout = 5s;
constexpr size_t kServerQueueMax = 1024;
// Beyond the pool: every thread can be taken, with some left waiting.
constexpr size_t kSlowConnections = 2 * kHttpThreads + 1;
constexpr size_t kStalledConnections = 2 * kHttpThreads;
constexpr size_t kBurstConnections = kServerQueueMax + 200;
constexpr auto kDribbleInterval = 1s;
// A connection that stops mid-head holds a thread this long at most; the
// stalled ones queued ahead of a request are dropped in turns of the pool,
// plus one turn of margin for a loaded machine.
constexpr auto kStalledHoldMax = kServerReadTimeout + kServerKeepAliveTimeout;
constexpr auto kStalledAnswerWithin =
    (static_cast<int>(kStalledConnections / kHttpThreads) + 1) * kStalledHoldMax;
// A dribbling connection never trips the read timeout; a server that gives
// its threads back answers others at once, so three read timeouts are
// far more than a loaded machine needs.
constexpr auto kDribbleAnswerWithin = 3 * kServerReadTimeout;
// The slow clients dribble on past the longest a probe may wait, so a
// probe they starve fails instead of being rescued by their end.
constexpr auto kSlowTakeThreadsFirst = 2s;
constexpr auto kDribbleFor = kSlowTakeThreadsFirst + kDribbleAnswerWithin + 3s;
constexpr auto kProbeInterval = 1s;
// http/server_options.h: a reply not written within this is given up, and
// its connection closed.
constexpr auto kServerWriteTimeout = 5s;
// A client that stops reading: its receive buffer is kept small, and it asks
// for far more than the buffers between it and the server hold (the
// server's send buffer grows to 4 MiB here: net.ipv4.tcp_wmem), so that a
// reply stalls; the OpenAPI document is 15 kB.
constexpr int kStalledReaderBufferBytes = 4096;
constexpr size_t kStalledReaderRequests = 1000;
constexpr auto kStalledReaderWait = kServerWriteTimeout + 3s;
constexpr auto kStalledReaderDrain = 20s;
constexpr auto kConnectWait = 10s;
constexpr auto kBurstWait = 60s;

// A GET /v1/health on a fresh connection: its status, 0 when no whole
// answer came within `within` (with why in *why).
int probe(int port, std::chrono::seconds within, std::string* why) {
  const Deadline deadline = deadline_in(within);
  RawConnection conn(port, deadline);
  if (!conn.connected()) {
    *why = "no connection (errno " + std::to_string(conn.connect_errno()) + ")";
    return 0;
  }
  if (!conn.send_all(request_head("GET", "/v1/health", "Connection: close\r\n"), deadline)) {
    *why = "the request could not be sent";
    return 0;
  }
  std::string response;
  switch (conn.read_response(&response, deadline)) {
    case RawConnection::ReadEnd::kDone:
      return status_of(response);
    case RawConnection::ReadEnd::kClosed:
    case RawConnection::ReadEnd::kReset:
      *why = "closed without an answer";
      return 0;
    case RawConnection::ReadEnd::kTimeout:
      *why = "no answer within " + std::to_string(within.count()) + " s";
      return 0;
  }
  return 0;
}

// A request head that takes `bytes_min` seconds or more to send at one byte
// a second: the slow part is a header value.
std::string long_head(size_t bytes_min) {
  std::string head = "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
  head.append(bytes_min, 'a');
  return head + "\r\n\r\n";
}

class SlowClientsTest : public ServerTest {
 protected:
  std::vector<std::string> initial_flags() const override {
    return {"--http-threads", std::to_string(kHttpThreads)};
  }

  // Opens `n` connections, checked connected.
  std::vector<std::unique_ptr<RawConnection>> open(size_t n) {
    std::vector<std::unique_ptr<RawConnection>> out;
    for (size_t i = 0; i < n; ++i) {
      out.push_back(std::make_unique<RawConnection>(server().port(), deadline_in(kConnectWait)));
      EXPECT_TRUE(out.back()->connected()) << "connection " << i;
    }
    return out;
  }

  // Probes every kProbeInterval while `busy`; each probe must be answered 200.
  int probe_while(const std::atomic<bool>& busy) {
    int probes = 0;
    while (busy) {
      std::string why;
      const int status = probe(server().port(), kDribbleAnswerWithin, &why);
      EXPECT_EQ(status, 200) << "probe " << probes << ": " << why;
      ++probes;
      if (status != 200) break;  // one starved probe says it; the rest would wait as long
      std::this_thread::sleep_for(kProbeInterval);
    }
    return probes;
  }
};

TEST_F(SlowClientsTest, HeadersDribbledOnMoreConnectionsThanThreadsDoNotStopAnswersToOthers) {
  auto slow = open(kSlowConnections);
  const auto dribble_bytes = static_cast<size_t>(kDribbleFor / kDribbleInterval);
  const std::string head = long_head(dribble_bytes);
  std::atomic<bool> dribbling{true};
  std::thread dribble([&] {
    for (size_t b = 0; b < dribble_bytes; ++b) {
      for (auto& c : slow) c->send_all(head.substr(b, 1), deadline_in(kDribbleInterval));
      std::this_thread::sleep_for(kDribbleInterval);
    }
    dribbling = false;
  });
  std::this_thread::sleep_for(kSlowTakeThreadsFirst);

  const int probes = probe_while(dribbling);
  dribble.join();
  slow.clear();  // gone: the server must answer again at once

  EXPECT_GE(probes, 1);
  EXPECT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
}

TEST_F(SlowClientsTest, ConnectionsThatStopMidHeaderAreDroppedAndOthersAnswered) {
  auto stalled = open(kStalledConnections);
  for (auto& c : stalled) {
    ASSERT_TRUE(c->send_all("GET /v1/health HTTP/1.1\r\nHost: 12", deadline_in(kConnectWait)));
  }

  std::string why;
  EXPECT_EQ(probe(server().port(), kStalledAnswerWithin, &why), 200) << why;
  // The stalled connections were answered (a 400) or closed, not left hanging.
  for (size_t i = 0; i < stalled.size(); ++i) {
    std::string rest;
    EXPECT_NE(stalled[i]->read_response(&rest, deadline_in(kStalledAnswerWithin)),
              RawConnection::ReadEnd::kTimeout)
        << "stalled connection " << i << " left hanging";
  }
  EXPECT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
}

// A client that sends many requests and never reads the replies holds a
// reply in the middle of its write: the server gives that connection up
// once the write timeout passes, instead of keeping its buffers for as long
// as the client likes, and answers others meanwhile.
TEST_F(SlowClientsTest, AConnectionThatStopsReadingItsRepliesIsClosedAfterTheWriteTimeout) {
  RawConnection stalled(server().port(), deadline_in(kConnectWait), kStalledReaderBufferBytes);
  ASSERT_TRUE(stalled.connected());
  std::string requests;
  for (size_t i = 0; i < kStalledReaderRequests; ++i) {
    requests += request_head("GET", "/v1/openapi.json");
  }
  ASSERT_TRUE(stalled.send_all(requests, deadline_in(kConnectWait)));

  std::string why;
  EXPECT_EQ(probe(server().port(), kDribbleAnswerWithin, &why), 200) << why;
  std::this_thread::sleep_for(kStalledReaderWait);

  // Reading now gets what was buffered, then the end. A server without the
  // timeout would still be there to answer every request.
  std::string received;
  const auto end = stalled.read_until(&received, deadline_in(kStalledReaderDrain),
                                      [](const std::string&) { return false; });
  EXPECT_TRUE(end == RawConnection::ReadEnd::kClosed || end == RawConnection::ReadEnd::kReset)
      << "the connection was still open " << kStalledReaderDrain.count() << " s later";
  size_t answered = 0;
  for (size_t at = received.find("HTTP/1.1 200 "); at != std::string::npos;
       at = received.find("HTTP/1.1 200 ", at + 1)) {
    ++answered;
  }
  EXPECT_LT(answered, kStalledReaderRequests);
  RecordProperty("answered_before_the_close", static_cast<int>(answered));
  EXPECT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
}

// More connections at once than the pool and its queue take: each one gets
// a whole answer (200, or 503 when shed) or is closed without a byte; none
// hangs, and the server answers normally afterwards.
TEST_F(SlowClientsTest, BurstBeyondThePoolAndItsQueueIsAnsweredOrRefusedCleanly) {
  std::vector<std::unique_ptr<RawConnection>> burst;
  for (size_t i = 0; i < kBurstConnections; ++i) {
    burst.push_back(std::make_unique<RawConnection>(server().port()));
  }
  const Deadline deadline = deadline_in(kBurstWait);
  const std::string request = request_head("GET", "/v1/health", "Connection: close\r\n");
  std::vector<bool> sent(burst.size(), false);
  for (size_t i = 0; i < burst.size(); ++i) {
    if (burst[i]->wait_connected(deadline)) sent[i] = burst[i]->send_all(request, deadline);
  }
  size_t ok = 0, shed = 0, refused = 0, hung = 0;
  for (size_t i = 0; i < burst.size(); ++i) {
    if (!sent[i]) {
      (burst[i]->connect_errno() != 0 || burst[i]->connected() ? refused : hung) += 1;
      continue;
    }
    std::string response;
    const auto end = burst[i]->read_response(&response, deadline);
    if (end == RawConnection::ReadEnd::kTimeout) {
      ++hung;
    } else if (end == RawConnection::ReadEnd::kDone) {
      const int status = status_of(response);
      EXPECT_TRUE(status == 200 || status == 503) << "connection " << i << ": " << response;
      (status == 200 ? ok : shed) += 1;
    } else {
      EXPECT_TRUE(response.empty()) << "connection " << i << ", a reply cut short: " << response;
      ++refused;
    }
  }
  burst.clear();
  RecordProperty("answered_200", static_cast<int>(ok));
  RecordProperty("answered_503", static_cast<int>(shed));
  RecordProperty("refused", static_cast<int>(refused));
  EXPECT_EQ(hung, 0u) << hung << " of " << kBurstConnections << " left hanging (200: " << ok
                      << ", 503: " << shed << ", refused: " << refused << ")";
  EXPECT_GT(ok, 0u);

  std::string why;
  EXPECT_EQ(probe(server().port(), kDribbleAnswerWithin, &why), 200) << why;
  EXPECT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
}

}  // namespace
}  // namespace runledger::testing

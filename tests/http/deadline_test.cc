// The socket deadlines when they differ from one another: a server in this
// process on a real store and loopback, with a short read timeout and a long
// keep-alive timeout, or the other way round. runledgerd's own timeouts are
// all 5 s (wire_test.cc covers those); here a deadline set while a wait for
// another is pending must be kept whether it comes sooner or later.
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

#include <gtest/gtest.h>

#include "engine/clock.h"
#include "engine/engine.h"
#include "events/event_store.h"
#include "http/server.h"
#include "tests/http/raw_connection.h"
#include "tests/support/test_support.h"

namespace runledger::testing {
namespace {

using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;

// Far beyond each timeout here: a close must come well before it.
constexpr auto kDeadlineCloseWait = 20s;

class DeadlineServer {
 public:
  explicit DeadlineServer(const http::ServerOptions& options) {
    std::unique_ptr<EventStore> store;
    Status st = open_rocksdb_store(dir_.path(), StoreOptions{}, &store);
    if (!st.ok()) throw std::runtime_error("opening the store failed: " + st.ToString());
    EngineOptions eo;
    eo.timers = false;
    st = Engine::open(std::shared_ptr<EventStore>(std::move(store)), clock_, eo, &engine_);
    if (!st.ok()) throw std::runtime_error("opening the engine failed: " + st.ToString());
    server_ = std::make_unique<http::Server>(*engine_, options);
    st = server_->bind();
    if (!st.ok()) throw std::runtime_error("binding failed: " + st.ToString());
    serving_ = std::thread([this] { server_->serve(); });
  }
  ~DeadlineServer() {
    server_->stop();
    serving_.join();
    server_.reset();
    engine_->shutdown();
  }
  DeadlineServer(const DeadlineServer&) = delete;
  DeadlineServer& operator=(const DeadlineServer&) = delete;

  int port() const { return server_->port(); }

 private:
  TempDir dir_;
  SystemClock clock_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<http::Server> server_;
  std::thread serving_;
};

http::ServerOptions deadline_options(int read_timeout_ms, int keep_alive_timeout_s) {
  http::ServerOptions o;
  o.port = 0;  // a free one
  o.read_timeout_ms = read_timeout_ms;
  o.keep_alive_timeout_s = keep_alive_timeout_s;
  return o;
}

constexpr std::string_view kHealthRequest = "GET /v1/health HTTP/1.1\r\nHost: localhost\r\n\r\n";
constexpr std::string_view kHalfHealthRequest = "GET /v1/health HTTP/1.1\r\nHost: localhost\r\n";

// Reads until the server closes the socket, or the wait runs out.
bool closed_by_server_within(RawConnection& conn, std::chrono::seconds wait) {
  std::string rest;
  auto end = conn.read_until(&rest, deadline_in(wait), [](const std::string&) { return false; });
  return end == RawConnection::ReadEnd::kClosed || end == RawConnection::ReadEnd::kReset;
}

// Sends a whole health request on `conn` and reads its 200 reply.
::testing::AssertionResult health_answered(RawConnection& conn) {
  if (!conn.send_all(kHealthRequest, deadline_in(kReplyWait))) {
    return ::testing::AssertionFailure() << "the request could not be sent";
  }
  std::string response;
  if (conn.read_response(&response, deadline_in(kReplyWait)) != RawConnection::ReadEnd::kDone) {
    return ::testing::AssertionFailure() << "no whole reply: " << response;
  }
  if (response.rfind("HTTP/1.1 200 ", 0) != 0) {
    return ::testing::AssertionFailure() << "not a 200: " << response;
  }
  return ::testing::AssertionSuccess();
}

// After a reply the socket waits out a 30 s keep-alive; a request begun then
// must still be cut at its own, sooner, read timeout.
TEST(SocketDeadlines, AReadTimeoutSoonerThanTheKeepAliveTimeoutClosesAtTheReadTimeout) {
  DeadlineServer server(deadline_options(/*read_timeout_ms=*/400, /*keep_alive_timeout_s=*/30));
  RawConnection conn(server.port(), deadline_in(kReplyWait));
  ASSERT_TRUE(conn.connected());
  ASSERT_TRUE(health_answered(conn));
  // Past the first read timeout's wait: the one pending is the keep-alive's.
  std::this_thread::sleep_for(700ms);

  const auto started = Steady::now();
  ASSERT_TRUE(conn.send_all(kHalfHealthRequest, deadline_in(kReplyWait)));
  EXPECT_TRUE(closed_by_server_within(conn, kDeadlineCloseWait))
      << "open after " << kDeadlineCloseWait.count() << " s";
  const auto took = Steady::now() - started;
  EXPECT_GE(took, 350ms);  // not before the read timeout
  EXPECT_LT(took, 15s);    // nor at the keep-alive timeout's 30 s
}

// A connection that never sends a byte is let go at the read timeout of its
// connect: it cannot hold a place in the server for as long as it likes.
TEST(SocketDeadlines, ANewConnectionThatSendsNothingIsClosedAtTheReadTimeout) {
  DeadlineServer server(deadline_options(/*read_timeout_ms=*/400, /*keep_alive_timeout_s=*/30));
  const auto started = Steady::now();
  RawConnection conn(server.port(), deadline_in(kReplyWait));
  ASSERT_TRUE(conn.connected());
  EXPECT_TRUE(closed_by_server_within(conn, kDeadlineCloseWait))
      << "open after " << kDeadlineCloseWait.count() << " s";
  EXPECT_GE(Steady::now() - started, 350ms);  // not before the read timeout
}

// The other way round: a 1 s keep-alive wait is pending when a request
// begins with a 3 s read timeout; that wait ending must not close the
// socket, and the read timeout must.
TEST(SocketDeadlines, AReadTimeoutLaterThanTheKeepAliveTimeoutIsWaitedFor) {
  DeadlineServer server(deadline_options(/*read_timeout_ms=*/3000, /*keep_alive_timeout_s=*/1));
  RawConnection conn(server.port(), deadline_in(kReplyWait));
  ASSERT_TRUE(conn.connected());
  ASSERT_TRUE(health_answered(conn));

  const auto started = Steady::now();
  ASSERT_TRUE(conn.send_all(kHalfHealthRequest, deadline_in(kReplyWait)));
  EXPECT_TRUE(closed_by_server_within(conn, kDeadlineCloseWait))
      << "open after " << kDeadlineCloseWait.count() << " s";
  EXPECT_GE(Steady::now() - started, 2800ms);  // the keep-alive's 1 s did not close it
}

// A request whose reply keeps its socket open goes on being served: each
// request moves the keep-alive deadline on, and the wait pending from the
// first one does not close the socket under a later request.
TEST(SocketDeadlines, ASocketInUseOutlivesItsFirstKeepAliveDeadline) {
  DeadlineServer server(deadline_options(/*read_timeout_ms=*/5000, /*keep_alive_timeout_s=*/1));
  RawConnection conn(server.port(), deadline_in(kReplyWait));
  ASSERT_TRUE(conn.connected());
  const auto started = Steady::now();
  int served = 0;
  while (Steady::now() - started < 2500ms) {
    ASSERT_TRUE(health_answered(conn)) << "after " << served;
    ++served;
    std::this_thread::sleep_for(300ms);  // under the 1 s keep-alive each time
  }
  EXPECT_GE(served, 3);
  EXPECT_TRUE(closed_by_server_within(conn, kDeadlineCloseWait));  // and idle, it goes after 1 s
}

// A client on a slow link: it reads a few KB at a time, steadily, and all of
// its replies take it far longer than the write timeout. It gets every byte:
// the timeout counts from the last bytes the client took, not from the start
// of a reply. (One that stops reading is let go: slow_clients_test.cc.)
TEST(SocketDeadlines, AClientReadingSlowlyButSteadilyGetsEveryReply) {
  constexpr int kWriteTimeoutMs = 300;
  constexpr size_t kSlowReadBytes = 128 << 10;
  constexpr int kSmallReceiveBuffer = 4096;
  constexpr size_t kSmallSendBuffer = 4096;
  http::ServerOptions options =
      deadline_options(/*read_timeout_ms=*/5000, /*keep_alive_timeout_s=*/30);
  options.write_timeout_ms = kWriteTimeoutMs;
  // Else the kernel's buffer takes every reply whole at once, and no write
  // waits for the client.
  options.send_buffer_bytes = kSmallSendBuffer;
  DeadlineServer server(options);
  const std::string request = request_head("GET", "/v1/openapi.json");
  const size_t reply_bytes = round_trip(server.port(), request).size();
  ASSERT_GT(reply_bytes, 0u);
  const size_t replies = kSlowReadBytes / reply_bytes + 1;

  RawConnection conn(server.port(), deadline_in(kReplyWait), kSmallReceiveBuffer);
  ASSERT_TRUE(conn.connected());
  std::string requests;
  for (size_t i = 0; i < replies; ++i) requests += request;
  ASSERT_TRUE(conn.send_all(requests, deadline_in(kReplyWait)));
  const auto started = Steady::now();
  std::string received;
  const auto end =
      conn.read_until(&received, deadline_in(kDeadlineCloseWait), [&](const std::string& bytes) {
        std::this_thread::sleep_for(40ms);  // the slow link
        return bytes.size() >= replies * reply_bytes;
      });
  const auto took = Steady::now() - started;
  EXPECT_EQ(end, RawConnection::ReadEnd::kDone)
      << received.size() << " of " << replies * reply_bytes << " bytes before the end";
  // Else the reading did not outlast the timeout, and proved nothing.
  EXPECT_GE(took, std::chrono::milliseconds(3 * kWriteTimeoutMs));
}

}  // namespace
}  // namespace runledger::testing

// What one client address may hold (docs/operations.md, Limits): connections
// beyond --connections-per-client-max are closed at once, live streams
// beyond --live-streams-per-client-max get 503 too_many_streams, and another
// address is served meanwhile. Loopback has a whole /8: the "other client"
// connects from 127.0.0.2. With the caps at 0 (the positive control) the
// same connections are all served.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/http/raw_connection.h"
#include "tests/http/server_fixture.h"

namespace runledger::testing {
namespace {

// A blocking TCP connection from `source` to 127.0.0.1:port; -1 on failure.
int connect_from(const char* source, int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in from{};
  from.sin_family = AF_INET;
  ::inet_pton(AF_INET, source, &from.sin_addr);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Sends `request` and reads until the peer closes, a whole response came,
// or 10 s pass. "" with *closed when the peer closed without a byte.
std::string exchange(int fd, const std::string& request, bool* closed, bool head_only = false) {
  *closed = false;
  if (!request.empty() && ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) < 0) {
    *closed = true;
    return "";
  }
  std::string got;
  const Deadline until = deadline_in(std::chrono::seconds(10));
  auto done = [&] {
    return head_only ? got.find("\r\n\r\n") != std::string::npos : response_complete(got);
  };
  while (std::chrono::steady_clock::now() < until && !done()) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buf[4096];
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
      *closed = got.empty();
      break;
    }
    got.append(buf, static_cast<size_t>(n));
  }
  return got;
}

const std::string kHealth = "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
const std::string kLive = "GET /v1/events/live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

struct Fd {
  int fd;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

class ClientLimitsTest : public ServerTest {
 protected:
  std::vector<std::string> initial_flags() const override {
    return {"--connections-per-client-max", "4", "--live-streams-per-client-max", "2"};
  }
};

TEST_F(ClientLimitsTest, OneAddressGetsItsShareOfConnectionsAndAnotherIsServed) {
  // Given four idle connections from one address
  std::vector<std::unique_ptr<Fd>> held;
  for (int i = 0; i < 4; ++i) {
    held.push_back(std::make_unique<Fd>(connect_from("127.0.0.1", server().port())));
    ASSERT_GE(held.back()->fd, 0);
  }
  // When it opens a fifth, that one is closed at once, unanswered
  Fd fifth(connect_from("127.0.0.1", server().port()));
  ASSERT_GE(fifth.fd, 0);
  bool closed = false;
  std::string r = exchange(fifth.fd, kHealth, &closed);
  EXPECT_TRUE(closed) << r;
  // while another address is served
  Fd other(connect_from("127.0.0.2", server().port()));
  ASSERT_GE(other.fd, 0);
  r = exchange(other.fd, kHealth, &closed);
  EXPECT_EQ(status_of(r), 200) << r;
  // and once one of the four closes, the address may open one again
  held.pop_back();
  bool served = false;
  const Deadline until = deadline_in(std::chrono::seconds(10));
  while (!served && std::chrono::steady_clock::now() < until) {
    Fd again(connect_from("127.0.0.1", server().port()));
    served = status_of(exchange(again.fd, kHealth, &closed)) == 200;
  }
  EXPECT_TRUE(served);
  // and /metrics counted the refusal (asked from the other address: the
  // server frees a closed connection's slot a moment after it closes)
  Fd metrics(connect_from("127.0.0.2", server().port()));
  ApiReply m;
  m.body = exchange(metrics.fd, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", &closed);
  const std::string counter = "runledger_http_refused_total{reason=\"client_connections\"} ";
  const size_t at = m.body.find(counter);
  ASSERT_NE(at, std::string::npos) << m.body;
  EXPECT_GE(std::stoi(m.body.substr(at + counter.size())), 1) << m.body.substr(at, 80);
}

TEST_F(ClientLimitsTest, OneAddressGetsItsShareOfLiveStreams) {
  std::vector<std::unique_ptr<Fd>> streams;
  bool closed = false;
  for (int i = 0; i < 2; ++i) {
    streams.push_back(std::make_unique<Fd>(connect_from("127.0.0.1", server().port())));
    ASSERT_GE(streams.back()->fd, 0);
    ASSERT_EQ(::send(streams.back()->fd, kLive.data(), kLive.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(kLive.size()));
  }
  // The third from the same address: 503 too_many_streams
  Fd third(connect_from("127.0.0.1", server().port()));
  std::string r = exchange(third.fd, kLive, &closed);
  expect_error_response(r, 503, "too_many_streams");
  // another address opens one
  Fd other(connect_from("127.0.0.2", server().port()));
  r = exchange(other.fd, kLive, &closed, /*head_only=*/true);
  EXPECT_EQ(r.rfind("HTTP/1.1 200", 0), 0u) << r.substr(0, 200);
  EXPECT_NE(r.find("text/event-stream"), std::string::npos) << r.substr(0, 200);
}

class NoClientLimitsTest : public ServerTest {
 protected:
  std::vector<std::string> initial_flags() const override {
    return {"--connections-per-client-max", "0", "--live-streams-per-client-max", "0"};
  }
};

// The positive control: without caps, the fifth connection is answered.
TEST_F(NoClientLimitsTest, WithoutCapsTheFifthConnectionIsServed) {
  std::vector<std::unique_ptr<Fd>> held;
  for (int i = 0; i < 4; ++i) {
    held.push_back(std::make_unique<Fd>(connect_from("127.0.0.1", server().port())));
  }
  Fd fifth(connect_from("127.0.0.1", server().port()));
  bool closed = false;
  std::string r = exchange(fifth.fd, kHealth, &closed);
  EXPECT_EQ(status_of(r), 200) << r;
}

}  // namespace
}  // namespace runledger::testing

// RawConnection: see raw_connection.h.
#include "tests/http/raw_connection.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace runledger::testing {
namespace {

constexpr size_t kReadChunkBytes = 64 * 1024;

int millis_left(Deadline deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::max<int64_t>(0, left.count()));
}

// Waits for `events` on fd until the deadline; false on timeout.
bool wait_for(int fd, short events, Deadline deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    int n = poll(&p, 1, millis_left(deadline));
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) return true;  // let the next call report the error
  }
}

// The value of a header in a raw head, lower-cased ("" when absent).
std::string head_value(const std::string& head, const std::string& name) {
  std::string h = lowercase(head);
  auto at = h.find("\r\n" + name + ":");
  if (at == std::string::npos) return "";
  auto start = at + 2 + name.size() + 1;
  auto end = h.find("\r\n", start);
  std::string v = h.substr(start, end - start);
  v.erase(0, v.find_first_not_of(' '));
  return v;
}

}  // namespace

std::string lowercase(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

RawConnection::RawConnection(int port, int receive_buffer_bytes) {
  fd_ = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) {
    connect_errno_ = errno;
    return;
  }
  // Before connect: the window the peer is offered is fixed then.
  if (receive_buffer_bytes > 0 && setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer_bytes,
                                             sizeof receive_buffer_bytes) != 0) {
    connect_errno_ = errno;
    return;
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    connected_ = true;
  } else if (errno != EINPROGRESS) {
    connect_errno_ = errno;
  }
}

RawConnection::RawConnection(int port, Deadline deadline, int receive_buffer_bytes)
    : RawConnection(port, receive_buffer_bytes) {
  wait_connected(deadline);
}

bool RawConnection::wait_connected(Deadline deadline) {
  if (connected_ || connect_errno_ != 0 || fd_ < 0) return connected_;
  if (!wait_for(fd_, POLLOUT, deadline)) return false;  // neither connected nor refused yet
  int err = 0;
  socklen_t len = sizeof err;
  getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len);
  connected_ = err == 0;
  connect_errno_ = err;
  return connected_;
}

RawConnection::~RawConnection() {
  if (fd_ >= 0) close(fd_);
}

bool RawConnection::send_all(std::string_view bytes, Deadline deadline) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n > 0) {
      bytes.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_for(fd_, POLLOUT, deadline)) return false;
      continue;
    }
    return false;
  }
  return true;
}

RawConnection::ReadEnd RawConnection::read_until(
    std::string* received, Deadline deadline,
    const std::function<bool(const std::string&)>& complete) {
  char buf[kReadChunkBytes];
  for (;;) {
    if (complete(*received)) return ReadEnd::kDone;
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n > 0) {
      received->append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n == 0) return ReadEnd::kClosed;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return ReadEnd::kReset;
    if (!wait_for(fd_, POLLIN, deadline)) return ReadEnd::kTimeout;
  }
}

RawConnection::ReadEnd RawConnection::read_response(std::string* received, Deadline deadline) {
  return read_until(received, deadline, response_complete);
}

bool response_complete(const std::string& bytes) {
  auto head_end = bytes.find("\r\n\r\n");
  if (head_end == std::string::npos) return false;
  const std::string head = bytes.substr(0, head_end + 2);
  const size_t body_at = head_end + 4;
  const int status = status_of(bytes);
  if (status == 204 || status == 304 || (status >= 100 && status < 200)) return true;
  std::string length = head_value(head, "content-length");
  if (!length.empty()) return bytes.size() >= body_at + std::strtoull(length.c_str(), nullptr, 10);
  if (head_value(head, "transfer-encoding").find("chunked") != std::string::npos) {
    return bytes.find("\r\n0\r\n\r\n", body_at - 2) != std::string::npos;
  }
  return false;  // the body runs until the server closes
}

int status_of(const std::string& response) {
  if (response.rfind("HTTP/1.", 0) != 0 || response.size() < 12) return 0;
  return std::atoi(response.substr(9, 3).c_str());
}

std::string body_of(const std::string& response) {
  auto head_end = response.find("\r\n\r\n");
  return head_end == std::string::npos ? "" : response.substr(head_end + 4);
}

std::string round_trip(int port, const std::string& request) {
  RawConnection conn(port, deadline_in(kReplyWait));
  EXPECT_TRUE(conn.connected());
  EXPECT_TRUE(conn.send_all(request, deadline_in(kReplyWait)));
  std::string response;
  conn.read_response(&response, deadline_in(kReplyWait));
  return response;
}

void expect_error_response(const std::string& response, int status, const std::string& code) {
  EXPECT_EQ(status_of(response), status) << response;
  auto body = nlohmann::json::parse(body_of(response), nullptr, false);
  ASSERT_TRUE(body.is_object()) << response;
  EXPECT_EQ(body.value("code", ""), code) << response;
  EXPECT_FALSE(body.value("error", "").empty()) << response;
}

std::string request_head(const std::string& method, const std::string& path,
                         const std::string& extra_headers) {
  return method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + extra_headers + "\r\n";
}

}  // namespace runledger::testing

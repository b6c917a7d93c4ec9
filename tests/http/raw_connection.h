// RawConnection: one TCP connection to the server under test, driven byte
// by byte, for what an HTTP library will not do on purpose: a Content-Length
// that lies, a chunked body that never ends, a header sent one byte at a
// time, a connection held open and idle. Every wait has a deadline, so a
// server that hangs fails the test instead of hanging it.
// Not thread-safe: one thread drives one connection.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

namespace runledger::testing {

using Deadline = std::chrono::steady_clock::time_point;

inline Deadline deadline_in(std::chrono::milliseconds d) {
  return std::chrono::steady_clock::now() + d;
}

// How long a test waits for a reply: long on a loaded machine, yet a server
// that never answers fails the test rather than hanging it.
inline constexpr std::chrono::seconds kReplyWait{30};

// `s` in ASCII lower case: header names match whatever their case.
std::string lowercase(std::string s);

class RawConnection {
 public:
  enum class ReadEnd {
    kDone,     // the predicate said the bytes are complete
    kClosed,   // the peer closed (FIN)
    kReset,    // the peer reset, or another socket error
    kTimeout,  // the deadline passed first
  };

  // Starts connecting to 127.0.0.1:port without waiting (so a test can
  // start hundreds at once); wait_connected() finishes it. A
  // `receive_buffer_bytes` above 0 fixes the socket's receive buffer near
  // that size (the kernel doubles it and sets a floor), so that a client
  // which stops reading pushes back on the server after little data.
  explicit RawConnection(int port, int receive_buffer_bytes = 0);
  // Connects to 127.0.0.1:port, waiting until `deadline` at most.
  RawConnection(int port, Deadline deadline, int receive_buffer_bytes = 0);
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  // Waits until the connect started by the constructor is done; false when
  // it failed (connect_errno() says why) or the deadline passed.
  bool wait_connected(Deadline deadline);
  bool connected() const { return connected_; }
  // errno of a failed connect (0 when connected or timed out).
  int connect_errno() const { return connect_errno_; }

  // Sends every byte before the deadline; false on an error or timeout.
  bool send_all(std::string_view bytes, Deadline deadline);
  // Appends what arrives to `received` until `complete(received)` is true,
  // the peer closes, or the deadline passes.
  ReadEnd read_until(std::string* received, Deadline deadline,
                     const std::function<bool(const std::string&)>& complete);
  // Reads one whole HTTP response (by Content-Length, chunked end, or close).
  ReadEnd read_response(std::string* received, Deadline deadline);

 private:
  int fd_ = -1;
  bool connected_ = false;
  int connect_errno_ = 0;
};

// True when `bytes` start with a complete HTTP/1.1 response.
bool response_complete(const std::string& bytes);
// The status code of a raw response ("HTTP/1.1 413 ..."), 0 when none.
int status_of(const std::string& response);
// The body of a raw response with a Content-Length ("" when none).
std::string body_of(const std::string& response);
// Sends `request` byte for byte on a fresh connection to 127.0.0.1:port and
// returns the whole response ("" when none came within kReplyWait).
std::string round_trip(int port, const std::string& request);
// Checks a raw response against the error contract: the status, a JSON
// body with the stable `code` and a non-empty `error` sentence.
void expect_error_response(const std::string& response, int status, const std::string& code);
// A raw request head ending in the blank line.
std::string request_head(const std::string& method, const std::string& path,
                         const std::string& extra_headers = "");

}  // namespace runledger::testing

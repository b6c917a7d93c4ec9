// The HTTP wire of a real runledgerd, below what an HTTP library lets a
// client do: pipelined requests, HEAD, Expect: 100-continue, HTTP/1.0
// keep-alive, a request that never finishes, and the refusals of requests
// that cannot be read (414, 431, 501, 505), each in the API's error shape.
#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/http/raw_connection.h"
#include "tests/http/server_fixture.h"

namespace runledger::testing {
namespace {

using namespace std::chrono_literals;

// The server's read timeout is 5 s from a request's first byte; a close
// must come well before this.
constexpr auto kCloseWait = 20s;

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string post_head(const std::string& path, const std::string& body,
                      const std::string& extra = "") {
  return request_head("POST", path,
                      "Content-Type: application/json\r\nContent-Length: " +
                          std::to_string(body.size()) + "\r\n" + extra);
}

// Reads until the end of a response's headers (an interim 100 included).
RawConnection::ReadEnd read_head(RawConnection& conn, std::string* received) {
  return conn.read_until(received, deadline_in(kReplyWait), [](const std::string& s) {
    return s.find("\r\n\r\n") != std::string::npos;
  });
}

using WireTest = ServerTest;

TEST_F(WireTest, PipelinedRequestsAreAnsweredInOrder) {
  RawConnection conn(server().port(), deadline_in(kReplyWait));
  ASSERT_TRUE(conn.connected());
  const std::string job = R"({"id":"p1","kind":"k","target":"t"})";
  // Three requests in one write: a command, a read of what it did, another read.
  ASSERT_TRUE(conn.send_all(post_head("/v1/jobs", job) + job + request_head("GET", "/v1/jobs/p1") +
                                request_head("GET", "/v1/jobs/nope"),
                            deadline_in(kReplyWait)));
  std::string all;
  auto end = conn.read_until(&all, deadline_in(kReplyWait), [](const std::string& s) {
    if (count_of(s, "HTTP/1.1 ") < 3) return false;
    return response_complete(s.substr(s.rfind("HTTP/1.1 ")));
  });
  ASSERT_EQ(end, RawConnection::ReadEnd::kDone) << all;
  size_t second = all.find("HTTP/1.1 ", 1);
  size_t third = all.find("HTTP/1.1 ", second + 1);
  EXPECT_EQ(status_of(all.substr(0, second)), 201) << all;
  EXPECT_EQ(status_of(all.substr(second, third - second)), 200) << all;
  EXPECT_NE(all.substr(second, third - second).find("\"QUEUED\""), std::string::npos) << all;
  EXPECT_EQ(status_of(all.substr(third)), 404) << all;
}

// What a connection carried for a HEAD followed by a GET: the HEAD's status
// line and headers, and every byte after them (a body the HEAD should not
// have had would stand before the GET's reply).
struct HeadThenGet {
  std::string head;
  std::string after;
};

HeadThenGet head_then_get(int port, const std::string& head_path, const std::string& get_path) {
  HeadThenGet out;
  RawConnection conn(port, deadline_in(kReplyWait));
  EXPECT_TRUE(conn.connected());
  EXPECT_TRUE(conn.send_all(request_head("HEAD", head_path), deadline_in(kReplyWait)));
  EXPECT_EQ(read_head(conn, &out.head), RawConnection::ReadEnd::kDone);
  const size_t end = out.head.find("\r\n\r\n");
  if (end == std::string::npos) return out;
  out.after = out.head.substr(end + 4);
  out.head.resize(end + 4);
  EXPECT_TRUE(conn.send_all(request_head("GET", get_path), deadline_in(kReplyWait)));
  std::string next;
  EXPECT_EQ(conn.read_response(&next, deadline_in(kReplyWait)), RawConnection::ReadEnd::kDone);
  out.after += next;
  return out;
}

TEST_F(WireTest, HeadSendsTheHeadersOfAGetWithoutItsBody) {
  HeadThenGet r = head_then_get(server().port(), "/v1/health", "/v1/jobs/nope");
  EXPECT_EQ(status_of(r.head), 200) << r.head;
  EXPECT_NE(lowercase(r.head).find("content-length: "), std::string::npos) << r.head;
  EXPECT_EQ(lowercase(r.head).find("content-length: 0\r"), std::string::npos) << r.head;
  EXPECT_EQ(r.after.rfind("HTTP/1.1 404 ", 0), 0u) << r.after;
}

TEST_F(WireTest, HeadOfTheLiveStreamOpensNoStream) {
  HeadThenGet r = head_then_get(server().port(), "/v1/events/live", "/v1/health");
  EXPECT_EQ(status_of(r.head), 200) << r.head;
  EXPECT_NE(lowercase(r.head).find("content-type: text/event-stream"), std::string::npos) << r.head;
  // The connection is free for the next request at once: no stream holds it.
  EXPECT_EQ(r.after.rfind("HTTP/1.1 200 ", 0), 0u) << r.after;
}

TEST_F(WireTest, ExpectContinueGetsAnInterimReplyBeforeTheBodyIsSent) {
  RawConnection conn(server().port(), deadline_in(kReplyWait));
  ASSERT_TRUE(conn.connected());
  const std::string job = R"({"id":"c1","kind":"k","target":"t"})";
  ASSERT_TRUE(conn.send_all(post_head("/v1/jobs", job, "Expect: 100-continue\r\n"),
                            deadline_in(kReplyWait)));
  std::string interim;
  ASSERT_EQ(read_head(conn, &interim), RawConnection::ReadEnd::kDone);
  EXPECT_EQ(interim, "HTTP/1.1 100 Continue\r\n\r\n");
  ASSERT_TRUE(conn.send_all(job, deadline_in(kReplyWait)));
  std::string response;
  ASSERT_EQ(conn.read_response(&response, deadline_in(kReplyWait)), RawConnection::ReadEnd::kDone);
  EXPECT_EQ(status_of(response), 201) << response;
}

TEST_F(WireTest, Http10KeepsTheConnectionOnlyWhenAsked) {
  {
    RawConnection conn(server().port(), deadline_in(kReplyWait));
    ASSERT_TRUE(conn.connected());
    ASSERT_TRUE(conn.send_all("GET /v1/health HTTP/1.0\r\n\r\n", deadline_in(kReplyWait)));
    std::string response;
    ASSERT_EQ(conn.read_response(&response, deadline_in(kReplyWait)),
              RawConnection::ReadEnd::kDone);
    EXPECT_EQ(status_of(response), 200) << response;
    EXPECT_NE(lowercase(response).find("connection: close"), std::string::npos) << response;
    std::string rest;
    EXPECT_EQ(
        conn.read_until(&rest, deadline_in(kCloseWait), [](const std::string&) { return false; }),
        RawConnection::ReadEnd::kClosed);
    EXPECT_EQ(rest, "");
  }
  RawConnection conn(server().port(), deadline_in(kReplyWait));
  ASSERT_TRUE(conn.connected());
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(conn.send_all("GET /v1/health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
                              deadline_in(kReplyWait)));
    std::string response;
    ASSERT_EQ(conn.read_response(&response, deadline_in(kReplyWait)), RawConnection::ReadEnd::kDone)
        << "request " << i;
    EXPECT_EQ(status_of(response), 200) << response;
    EXPECT_NE(lowercase(response).find("connection: keep-alive"), std::string::npos) << response;
  }
}

TEST_F(WireTest, ARequestThatNeverFinishesIsClosedAfterTheReadTimeout) {
  RawConnection conn(server().port(), deadline_in(kReplyWait));
  ASSERT_TRUE(conn.connected());
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(
      conn.send_all("GET /v1/health HTTP/1.1\r\nHost: localhost\r\n", deadline_in(kReplyWait)));
  std::string received;
  auto end =
      conn.read_until(&received, deadline_in(kCloseWait), [](const std::string&) { return false; });
  EXPECT_TRUE(end == RawConnection::ReadEnd::kClosed || end == RawConnection::ReadEnd::kReset)
      << "still open after " << kCloseWait.count() << " s";
  EXPECT_GE(std::chrono::steady_clock::now() - start, 4s);  // not before the read timeout
  EXPECT_TRUE(IsStatus(client().get("/v1/health"), 200));
}

// The reply of a command whose client hung up finds its socket gone; the
// command still happened, and the server goes on serving.
TEST_F(WireTest, AClientThatHangsUpBeforeItsReplyLeavesTheServerServing) {
  const std::string job = R"({"id":"gone","kind":"k","target":"t"})";
  for (int i = 0; i < 20; ++i) {
    RawConnection conn(server().port(), deadline_in(kReplyWait));
    ASSERT_TRUE(conn.connected());
    const std::string body = i == 0 ? job : R"({"kind":"k","target":"t"})";
    ASSERT_TRUE(conn.send_all(post_head("/v1/jobs", body) + body, deadline_in(kReplyWait)));
  }  // each connection closes here, its reply not read
  auto gone = client().get("/v1/jobs/gone");
  for (int tries = 0; tries < 100 && gone.status == 404; ++tries) {
    std::this_thread::sleep_for(50ms);  // the engine may not have answered it yet
    gone = client().get("/v1/jobs/gone");
  }
  EXPECT_TRUE(IsStatus(gone, 200));
  EXPECT_TRUE(IsStatus(client().get("/v1/health"), 200));
}

TEST_F(WireTest, AnIdleKeepAliveConnectionIsClosedAfterTheKeepAliveTimeout) {
  RawConnection conn(server().port(), deadline_in(kReplyWait));
  ASSERT_TRUE(conn.connected());
  ASSERT_TRUE(conn.send_all(request_head("GET", "/v1/health"), deadline_in(kReplyWait)));
  std::string response;
  ASSERT_EQ(conn.read_response(&response, deadline_in(kReplyWait)), RawConnection::ReadEnd::kDone);
  ASSERT_EQ(status_of(response), 200) << response;
  auto idle_from = std::chrono::steady_clock::now();
  std::string rest;
  auto end =
      conn.read_until(&rest, deadline_in(kCloseWait), [](const std::string&) { return false; });
  EXPECT_TRUE(end == RawConnection::ReadEnd::kClosed || end == RawConnection::ReadEnd::kReset)
      << "still open after " << kCloseWait.count() << " s idle";
  EXPECT_GE(std::chrono::steady_clock::now() - idle_from, 4s);  // not before the 5 s timeout
  EXPECT_EQ(rest, "");
}

TEST_F(WireTest, ATooLongRequestTargetIs414) {
  expect_error_response(
      round_trip(server().port(), request_head("GET", "/v1/jobs/" + std::string(9000, 'a'))), 414,
      "uri_too_long");
}

// A line longer than the server's first input buffer (4 KiB) but within the
// limits is read whole: the buffer grows for it.
TEST_F(WireTest, AHeaderLineOfTwelveKibibytesIsServed) {
  const std::string response = round_trip(
      server().port(),
      request_head("GET", "/v1/health", "X-Long: " + std::string(12 * 1024, 'l') + "\r\n"));
  EXPECT_EQ(status_of(response), 200) << response;
}

TEST_F(WireTest, TooManyHeaderBytesAre431) {
  std::string headers;
  for (int i = 0; i < 40; ++i)
    headers += "X-Filler-" + std::to_string(i) + ": " + std::string(500, 'f') + "\r\n";
  expect_error_response(round_trip(server().port(), request_head("GET", "/v1/health", headers)),
                        431, "headers_too_large");
}

TEST_F(WireTest, AnUnknownTransferCodingIs501) {
  expect_error_response(
      round_trip(server().port(),
                 request_head("POST", "/v1/jobs", "Transfer-Encoding: gzip\r\n") + "x"),
      501, "not_implemented");
}

TEST_F(WireTest, AnotherHttpVersionIs505) {
  expect_error_response(round_trip(server().port(), "GET /v1/health HTTP/2.0\r\n\r\n"), 505,
                        "http_version_not_supported");
}

TEST_F(WireTest, AMalformedRequestLineIs400AndNothingChanges) {
  expect_error_response(round_trip(server().port(), "POST /v1/jobs\r\n\r\n"), 400, "bad_request");
  expect_error_response(
      round_trip(server().port(), "GET /v1/health HTTP/1.1\r\nBad Header\r\n\r\n"), 400,
      "bad_request");
  auto health = client().get("/v1/health");
  ASSERT_TRUE(IsStatus(health, 200));
  EXPECT_EQ(health.json.value("last_seq", -1), 0) << health.body;
}

// RFC 9112 3.2: an HTTP/1.1 request names its host exactly once.
TEST_F(WireTest, AnHttp11RequestWithoutAHostOrWithTwoIs400) {
  expect_error_response(round_trip(server().port(), "GET /v1/health HTTP/1.1\r\n\r\n"), 400,
                        "bad_request");
  expect_error_response(
      round_trip(server().port(),
                 "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: 127.0.0.1\r\n\r\n"),
      400, "bad_request");
  // HTTP/1.0 had no Host field.
  EXPECT_EQ(status_of(round_trip(server().port(), "GET /v1/health HTTP/1.0\r\n\r\n")), 200);
}

// RFC 9112 3.2.2: a server takes the absolute form, and its authority is the host.
TEST_F(WireTest, AnAbsoluteFormTargetIsServedWithItsAuthorityAsTheHost) {
  const std::string port = std::to_string(server().port());
  const std::string own =
      round_trip(server().port(), "GET http://127.0.0.1:" + port +
                                      "/v1/health HTTP/1.1\r\nHost: ignored.example\r\n\r\n");
  const std::string rebound = round_trip(
      server().port(), "GET http://evil.example:" + port + "/v1/health HTTP/1.1\r\n\r\n");

  EXPECT_EQ(status_of(own), 200) << own;
  expect_error_response(rebound, 421, "misdirected_request");
}

}  // namespace
}  // namespace runledger::testing

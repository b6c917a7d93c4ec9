// Requests a web page could make the operator's browser send to a real
// runledgerd (docs/operations.md "What the HTTP API refuses, and why"): a
// no-cors fetch and a form post from another site are refused (403) and
// change nothing; a body that is not JSON is 415; with authentication off
// a Host that is not loopback or the listen address (DNS rebinding) is 421;
// the requests of the server's own pages, of curl and of the CLI pass.
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/http/job_calls.h"
#include "tests/http/raw_connection.h"
#include "tests/http/server_fixture.h"

namespace runledger::testing {
namespace {

using nlohmann::json;

// `method path` with exactly the header lines given (each ending in CRLF)
// and `body` with its Content-Length.
std::string request_with(const std::string& method, const std::string& path,
                         const std::string& headers, const std::string& body = "") {
  std::string r = method + " " + path + " HTTP/1.1\r\n" + headers;
  if (!body.empty() || method != "GET")
    r += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  return r + "Connection: close\r\n\r\n" + body;
}

// What Chromium sends for fetch(url, {method: "POST", mode: "no-cors", body:
// "<json text>"}) made by a page of http://evil.example.
std::string no_cors_fetch_headers(int port) {
  return "Host: 127.0.0.1:" + std::to_string(port) +
         "\r\n"
         "Content-Type: text/plain;charset=UTF-8\r\n"
         "Accept: */*\r\n"
         "Origin: http://evil.example\r\n"
         "Sec-Fetch-Site: cross-site\r\n"
         "Sec-Fetch-Mode: no-cors\r\n"
         "Sec-Fetch-Dest: empty\r\n"
         "Referer: http://evil.example/\r\n"
         "Accept-Encoding: gzip, deflate, br\r\n"
         "Accept-Language: en-US,en;q=0.9\r\n"
         "User-Agent: Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0.0.0 Safari/537.36\r\n";
}

// What Chromium sends when a page of http://evil.example submits
// <form method="post" action="http://127.0.0.1:PORT/..."> on its own.
std::string form_post_headers(int port) {
  return "Host: 127.0.0.1:" + std::to_string(port) +
         "\r\n"
         "Content-Type: application/x-www-form-urlencoded\r\n"
         "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n"
         "Origin: http://evil.example\r\n"
         "Sec-Fetch-Site: cross-site\r\n"
         "Sec-Fetch-Mode: navigate\r\n"
         "Sec-Fetch-User: ?1\r\n"
         "Sec-Fetch-Dest: document\r\n"
         "Referer: http://evil.example/\r\n"
         "Upgrade-Insecure-Requests: 1\r\n"
         "User-Agent: Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0.0.0 Safari/537.36\r\n";
}

std::string host_line(const std::string& authority) { return "Host: " + authority + "\r\n"; }

constexpr char kReleaseBody[] = R"({"note":"x","execution_stopped":true})";

class CrossSiteTest : public ServerTest {
 protected:
  // An EXECUTION_STATE_UNKNOWN hold: the one whose release lets work run again.
  std::string place_hold() {
    ApiReply r = client().post(
        "/v1/holds",
        {{"target", "shop-a/orders"}, {"kind", "EXECUTION_STATE_UNKNOWN"}, {"reason", "lost"}});
    EXPECT_TRUE(IsStatus(r, 201));
    return r.json.value("id", "");
  }
  bool hold_open(const std::string& id) {
    return !client().get("/v1/holds/" + id).json.value("released", true);
  }
  std::string port_text() { return std::to_string(server().port()); }
};

TEST_F(CrossSiteTest, ANoCorsFetchFromAnotherSiteIsRefusedAndReleasesNothing) {
  const std::string hold = place_hold();
  const size_t before = client().event_count();

  const std::string response = round_trip(
      server().port(), request_with("POST", "/v1/holds/" + hold + "/release",
                                    no_cors_fetch_headers(server().port()), kReleaseBody));

  expect_error_response(response, 403, "cross_origin");
  EXPECT_TRUE(hold_open(hold));
  EXPECT_EQ(client().event_count(), before);
}

TEST_F(CrossSiteTest, AFormPostFromAnotherSiteIsRefusedAndCancelsNothing) {
  ASSERT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));

  const std::string response = round_trip(
      server().port(),
      request_with("POST", "/v1/jobs/j1/cancel", form_post_headers(server().port()), "reason=x"));
  // A form with no fields at all: an empty body, still a form.
  const std::string empty_form =
      round_trip(server().port(),
                 request_with("POST", "/v1/jobs/j1/rerun", form_post_headers(server().port())));

  expect_error_response(response, 403, "cross_origin");
  expect_error_response(empty_form, 403, "cross_origin");
  const json job = job_view(client(), "j1");
  EXPECT_EQ(job.value("state", ""), "QUEUED");
  EXPECT_FALSE(job.value("cancel_requested", true));
  EXPECT_EQ(job.value("attempt", 0), 1);
}

// The issue's repro: a rebound name, its own origin, a text body.
TEST_F(CrossSiteTest, AReboundHostIsRefusedBeforeAnythingElse) {
  const std::string hold = place_hold();

  const std::string response = round_trip(
      server().port(), request_with("POST", "/v1/holds/" + hold + "/release",
                                    "Host: evil.example\r\nOrigin: http://evil.example\r\n"
                                    "Content-Type: text/plain\r\n",
                                    kReleaseBody));
  const std::string read = round_trip(
      server().port(), request_with("GET", "/v1/holds", host_line("evil.example:" + port_text())));

  expect_error_response(response, 421, "misdirected_request");
  expect_error_response(read, 421, "misdirected_request");
  EXPECT_TRUE(hold_open(hold));
}

TEST_F(CrossSiteTest, LoopbackNamesAndTheListenAddressAreServed) {
  for (const std::string host :
       {"127.0.0.1", "localhost", "LocalHost", "console.localhost", "127.0.0.2", "[::1]"}) {
    const std::string response = round_trip(
        server().port(), request_with("GET", "/v1/health", host_line(host + ":" + port_text())));
    EXPECT_EQ(status_of(response), 200) << host << "\n" << response;
  }
  for (const std::string host :
       {"127.evil.example", "localhost.evil.example", "10.0.0.1", "[::2]"}) {
    expect_error_response(
        round_trip(server().port(),
                   request_with("GET", "/v1/health", host_line(host + ":" + port_text()))),
        421, "misdirected_request");
  }
}

TEST_F(CrossSiteTest, ABodyThatIsNotJsonIs415AndChangesNothing) {
  const std::string host = host_line("127.0.0.1:" + port_text());
  const std::string job = R"({"id":"j1","kind":"k","target":"t1"})";
  for (const std::string type :
       {"text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
        "multipart/form-data", "application/jsonp", "application/json-seq"}) {
    expect_error_response(
        round_trip(server().port(),
                   request_with("POST", "/v1/jobs", host + "Content-Type: " + type + "\r\n", job)),
        415, "unsupported_media_type");
  }
  // A Blob body with no type: the browser sends no Content-Type at all.
  expect_error_response(round_trip(server().port(), request_with("POST", "/v1/jobs", host, job)),
                        415, "unsupported_media_type");
  EXPECT_EQ(client().event_count(), 0u);
}

TEST_F(CrossSiteTest, JsonBodiesAndEmptyBodiesOfCurlAndTheCliPass) {
  const std::string host = host_line("127.0.0.1:" + port_text());
  const std::string created = round_trip(
      server().port(),
      request_with("POST", "/v1/jobs", host + "Content-Type: Application/JSON; charset=utf-8\r\n",
                   R"({"id":"j1","kind":"k","target":"t1"})"));
  // `curl -XPOST .../cancel`: no body, no type.
  const std::string cancelled =
      round_trip(server().port(), request_with("POST", "/v1/jobs/j1/cancel", host));

  EXPECT_EQ(status_of(created), 201) << created;
  EXPECT_EQ(status_of(cancelled), 202) << cancelled;
}

// What the server's own pages send: an Origin equal to the server's.
TEST_F(CrossSiteTest, TheServersOwnOriginIsServed) {
  for (const std::string name : {"127.0.0.1", "localhost"}) {
    const std::string authority = name + ":" + port_text();
    const std::string response = round_trip(
        server().port(),
        request_with("POST", "/v1/jobs",
                     host_line(authority) + "Origin: http://" + authority +
                         "\r\nContent-Type: application/json\r\nSec-Fetch-Site: same-origin\r\n",
                     R"({"kind":"k","target":"t-)" + name + R"("})"));
    EXPECT_EQ(status_of(response), 201) << response;
  }
}

TEST_F(CrossSiteTest, AnyOtherOriginIsRefusedReadsIncluded) {
  const std::string authority = "127.0.0.1:" + port_text();
  for (const std::string& origin : std::vector<std::string>{
           "null", "http://evil.example", "http://127.0.0.1:1", "https://" + authority,
           "http://localhost:" + port_text(), "http://" + authority + ".evil.example"}) {
    expect_error_response(
        round_trip(
            server().port(),
            request_with("GET", "/v1/jobs", host_line(authority) + "Origin: " + origin + "\r\n")),
        403, "cross_origin");
  }
}

class CrossSiteWithAuthTest : public CrossSiteTest {
 protected:
  std::vector<std::string> initial_flags() const override {
    std::ofstream f(tokens_.path() + "/tokens");
    f << "ana reader reader-token-0123456789abcdef\n";
    return {"--auth-tokens", tokens_.path() + "/tokens"};
  }
  TempDir tokens_;
};

// With tokens, a rebound page has no token to send: any Host is served to
// a caller that has one. Another origin is still refused.
TEST_F(CrossSiteWithAuthTest, AnyHostIsServedToATokenButNotAnotherOrigin) {
  const std::string token = "Authorization: Bearer reader-token-0123456789abcdef\r\n";
  const std::string served = round_trip(
      server().port(),
      request_with("GET", "/v1/jobs", host_line("runledger.example:" + port_text()) + token));
  const std::string refused =
      round_trip(server().port(), request_with("GET", "/v1/jobs",
                                               host_line("runledger.example:" + port_text()) +
                                                   token + "Origin: http://evil.example\r\n"));

  EXPECT_EQ(status_of(served), 200) << served;
  expect_error_response(refused, 403, "cross_origin");
}

}  // namespace
}  // namespace runledger::testing

// 413 on a real server: a body over the configured limit (default 1 MiB) is
// refused whether its size is announced (Content-Length) or not (chunked),
// nothing changes, and the server goes on serving other requests.
#include <string>

#include <gtest/gtest.h>

#include "tests/http/job_calls.h"
#include "tests/http/raw_connection.h"
#include "tests/http/server_fixture.h"

namespace runledger::testing {
namespace {

constexpr size_t kChunkBytes = 64 * 1024;

std::string chunk(const std::string& data) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  return size + data + "\r\n";
}

// A JSON object of exactly `bytes` bytes: an enqueue whose `input` is a
// string padded to fill it.
std::string padded_enqueue(size_t bytes) {
  const std::string open = R"({"kind":"k","target":"t","input":")";
  const std::string close = R"("})";
  return open + std::string(bytes - open.size() - close.size(), 'x') + close;
}

class BodyLimitTest : public ServerTest {
 protected:
  // The server still answers a fresh connection, and nothing was written.
  void expect_still_serving(size_t events_before) {
    ApiClient fresh(server().port());
    EXPECT_TRUE(IsStatus(fresh.get("/v1/health"), 200));
    EXPECT_EQ(fresh.event_count(), events_before);
    EXPECT_TRUE(IsStatus(enqueue(fresh, "after", "t", "k"), 201));
  }
};

TEST_F(BodyLimitTest, ContentLengthOverTheLimitIs413BeforeTheBodyIsSent) {
  ASSERT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
  const size_t before = client().event_count();

  RawConnection conn(server().port(), deadline_in(kReplyWait));
  ASSERT_TRUE(conn.connected()) << conn.connect_errno();
  const std::string head = request_head("POST", "/v1/jobs",
                                        "Content-Type: application/json\r\nContent-Length: " +
                                            std::to_string(kBodyLimitBytes + 1) + "\r\n");
  ASSERT_TRUE(conn.send_all(head, deadline_in(kReplyWait)));
  std::string response;
  EXPECT_EQ(conn.read_response(&response, deadline_in(kReplyWait)), RawConnection::ReadEnd::kDone)
      << response;

  EXPECT_EQ(status_of(response), 413) << response;
  auto body = nlohmann::json::parse(body_of(response), nullptr, false);
  EXPECT_EQ(body.value("code", ""), "body_too_large") << response;
  EXPECT_FALSE(body.value("error", "").empty()) << response;
  expect_still_serving(before);
}

TEST_F(BodyLimitTest, BodyOfExactlyTheLimitIsReadNotRefused) {
  const size_t before = client().event_count();
  const std::string body = padded_enqueue(kBodyLimitBytes);
  ASSERT_EQ(body.size(), kBodyLimitBytes);

  // Read and judged on its fields: `input` is far over its own bound.
  ApiReply r = client().post_raw("/v1/jobs", body);
  EXPECT_TRUE(IsError(r, 422, "invalid_field"));
  EXPECT_EQ(r.json.value("field", ""), "input") << r.body;
  expect_still_serving(before);
}

TEST_F(BodyLimitTest, ChunkedBodyUnderTheLimitIsRead) {
  RawConnection conn(server().port(), deadline_in(kReplyWait));
  ASSERT_TRUE(conn.connected()) << conn.connect_errno();
  const std::string body = R"({"id": "chunked", "kind": "k", "target": "t"})";
  std::string request = request_head(
      "POST", "/v1/jobs", "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n");
  request += chunk(body.substr(0, 10)) + chunk(body.substr(10)) + "0\r\n\r\n";
  ASSERT_TRUE(conn.send_all(request, deadline_in(kReplyWait)));
  std::string response;
  EXPECT_EQ(conn.read_response(&response, deadline_in(kReplyWait)), RawConnection::ReadEnd::kDone);

  EXPECT_EQ(status_of(response), 201) << response;
  EXPECT_EQ(job_view(client(), "chunked").value("state", ""), "QUEUED");
}

TEST_F(BodyLimitTest, ChunkedBodyOverTheLimitIs413AndTheServerKeepsServing) {
  ASSERT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
  const size_t before = client().event_count();

  RawConnection conn(server().port(), deadline_in(kReplyWait));
  ASSERT_TRUE(conn.connected()) << conn.connect_errno();
  ASSERT_TRUE(conn.send_all(request_head("POST", "/v1/jobs",
                                         "Content-Type: application/json\r\n"
                                         "Transfer-Encoding: chunked\r\n"),
                            deadline_in(kReplyWait)));
  // Exactly the limit in full chunks, then one byte more. The chunk is left
  // unterminated so the server has read every byte sent when it answers:
  // a close with unread bytes would reset the connection under the reply.
  const std::string filler = chunk(std::string(kChunkBytes, ' '));
  for (size_t sent = 0; sent < kBodyLimitBytes; sent += kChunkBytes) {
    ASSERT_TRUE(conn.send_all(filler, deadline_in(kReplyWait))) << "after " << sent << " bytes";
  }
  ASSERT_TRUE(conn.send_all("1\r\n ", deadline_in(kReplyWait)));
  std::string response;
  EXPECT_EQ(conn.read_response(&response, deadline_in(kReplyWait)), RawConnection::ReadEnd::kDone)
      << response.substr(0, 500);

  EXPECT_EQ(status_of(response), 413) << response.substr(0, 500);
  auto body = nlohmann::json::parse(body_of(response), nullptr, false);
  EXPECT_EQ(body.value("code", ""), "body_too_large") << response.substr(0, 500);
  expect_still_serving(before);
}

}  // namespace
}  // namespace runledger::testing

// ApiClient: a small JSON client of the runledger HTTP API over
// httplib::Client (keep-alive), for the end-to-end tests. Every call returns
// what came back (status, raw body, parsed JSON) and never throws on an HTTP
// error, so a test asserts on exactly what a real caller would see.
// Not thread-safe: give each thread its own client.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace httplib {
class Client;
}

namespace runledger::testing {

struct ApiReply {
  int status = 0;         // 0: no HTTP reply at all (connection failed)
  std::string body;       // raw
  nlohmann::json json;    // the body parsed; discarded (is_discarded) when not JSON
  std::string transport;  // why there was no reply, when status is 0
  std::vector<std::pair<std::string, std::string>> headers;
  // A response header's value ("" when absent); names match case-blind.
  std::string header(const std::string& name) const;
};

using Headers = std::vector<std::pair<std::string, std::string>>;

class ApiClient {
 public:
  // Longest a single call may wait for its reply: a generous bound for a
  // loaded machine, short enough that a hung server fails the test.
  static constexpr int kReadTimeoutS = 30;

  explicit ApiClient(int port);
  ~ApiClient();
  ApiClient(const ApiClient&) = delete;
  ApiClient& operator=(const ApiClient&) = delete;

  ApiReply get(const std::string& path, const Headers& headers = {});
  ApiReply post(const std::string& path, const nlohmann::json& body, const Headers& headers = {});
  // The body sent byte for byte (malformed JSON, empty bodies).
  ApiReply post_raw(const std::string& path, const std::string& body, const Headers& headers = {});
  ApiReply patch(const std::string& path, const nlohmann::json& body, const Headers& headers = {});
  ApiReply del(const std::string& path, const Headers& headers = {});
  ApiReply send(const std::string& method, const std::string& path, const std::string& body,
                const Headers& headers);

  // The global log after seq `after`, paged through GET /v1/events.
  std::vector<nlohmann::json> events_after(uint64_t after);
  std::vector<nlohmann::json> all_events() { return events_after(0); }
  // How many events the log holds (by paging, not by trusting a counter).
  size_t event_count() { return all_events().size(); }

 private:
  std::unique_ptr<httplib::Client> http_;
};

// The value of the line "name value" of /metrics (a metric with no labels);
// -1 when there is none.
long metric_value(ApiClient& c, const std::string& name);

// Checks the error contract: the status, a JSON object with a non-empty
// `error` sentence and the stable `code`. Prints the body when it fails.
::testing::AssertionResult IsError(const ApiReply& r, int status, const std::string& code);
// Checks the status and that the body is JSON; prints the body when not.
::testing::AssertionResult IsStatus(const ApiReply& r, int status);

}  // namespace runledger::testing

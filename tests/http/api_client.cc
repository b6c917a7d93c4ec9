// ApiClient: see api_client.h.
#include "tests/http/api_client.h"

#include <strings.h>

#include <httplib.h>

#include "tests/support/test_support.h"

namespace runledger::testing {
namespace {

// GET /v1/events returns at most this many per page (docs/api.md).
constexpr int kEventsPageMax = 10000;
constexpr time_t kConnectTimeoutS = 10;

ApiReply to_reply(const httplib::Result& res) {
  ApiReply r;
  if (!res) {
    r.transport = httplib::to_string(res.error());
    r.json = nlohmann::json::value_t::discarded;
    return r;
  }
  r.status = res->status;
  r.body = res->body;
  for (const auto& [k, v] : res->headers) r.headers.emplace_back(k, v);
  r.json = nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  return r;
}

}  // namespace

std::string ApiReply::header(const std::string& name) const {
  for (const auto& [k, v] : headers) {
    if (strcasecmp(k.c_str(), name.c_str()) == 0) return v;
  }
  return "";
}

ApiClient::ApiClient(int port) : http_(std::make_unique<httplib::Client>("127.0.0.1", port)) {
  http_->set_keep_alive(true);
  http_->set_connection_timeout(kConnectTimeoutS);
  http_->set_read_timeout(kReadTimeoutS);
  http_->set_write_timeout(kReadTimeoutS);
}

ApiClient::~ApiClient() = default;

ApiReply ApiClient::send(const std::string& method, const std::string& path,
                         const std::string& body, const Headers& headers) {
  httplib::Request req;
  req.method = method;
  req.path = path;
  for (const auto& [k, v] : headers) req.headers.emplace(k, v);
  if (method != "GET") {
    req.body = body;
    req.headers.emplace("Content-Type", "application/json");
  }
  return to_reply(http_->send(req));
}

ApiReply ApiClient::get(const std::string& path, const Headers& headers) {
  return send("GET", path, "", headers);
}

ApiReply ApiClient::post(const std::string& path, const nlohmann::json& body,
                         const Headers& headers) {
  return send("POST", path, body.dump(), headers);
}

ApiReply ApiClient::post_raw(const std::string& path, const std::string& body,
                             const Headers& headers) {
  return send("POST", path, body, headers);
}

ApiReply ApiClient::patch(const std::string& path, const nlohmann::json& body,
                          const Headers& headers) {
  return send("PATCH", path, body.dump(), headers);
}

ApiReply ApiClient::del(const std::string& path, const Headers& headers) {
  return send("DELETE", path, "", headers);
}

std::vector<nlohmann::json> ApiClient::events_after(uint64_t after) {
  std::vector<nlohmann::json> out;
  for (;;) {
    ApiReply r = get("/v1/events?after=" + std::to_string(after) +
                     "&limit=" + std::to_string(kEventsPageMax));
    if (r.status != 200 || !r.json.is_object()) {
      ADD_FAILURE() << "GET /v1/events failed: " << r.status << " " << r.transport << " " << r.body;
      return out;
    }
    const auto& page = r.json.at("events");
    if (page.empty()) return out;
    for (const auto& e : page) out.push_back(e);
    after = r.json.at("next_after").get<uint64_t>();
  }
}

::testing::AssertionResult IsStatus(const ApiReply& r, int status) {
  if (r.status != status) {
    return ::testing::AssertionFailure()
           << "expected HTTP " << status << ", got " << r.status
           << (r.status == 0 ? " (" + r.transport + ")" : "") << ": " << r.body;
  }
  if (!r.body.empty() && r.json.is_discarded()) {
    return ::testing::AssertionFailure() << "HTTP " << status << " body is not JSON: " << r.body;
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult IsError(const ApiReply& r, int status, const std::string& code) {
  if (auto ok = IsStatus(r, status); !ok) return ok;
  if (!r.json.is_object()) {
    return ::testing::AssertionFailure() << "error body is not a JSON object: " << r.body;
  }
  const auto error = r.json.find("error");
  if (error == r.json.end() || !error->is_string() || error->get<std::string>().empty()) {
    return ::testing::AssertionFailure() << "no 'error' sentence in: " << r.body;
  }
  if (r.json.value("code", "") != code) {
    return ::testing::AssertionFailure() << "expected code '" << code << "' in: " << r.body;
  }
  return ::testing::AssertionSuccess();
}

long metric_value(ApiClient& c, const std::string& name) {
  return metric_in(c.get("/metrics").body, name);
}

}  // namespace runledger::testing

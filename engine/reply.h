// Reply: what a request gets back, already rendered (status + JSON body).
// The engine keeps replies of mutating requests for idempotency, so a reply
// is plain data.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace runledger {

struct Reply {
  int status = 200;
  std::string body;  // JSON text; empty for 204
  // Only for replies that are not JSON (metrics); never kept for idempotency.
  std::string content_type = "application/json";
  // Header lines sent besides the usual ones, each "Name: value\r\n" (the
  // console's caching and security headers); never kept for idempotency.
  std::string headers{};

  static Reply json(int status, const nlohmann::json& j) {
    return Reply{status, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)};
  }
  static Reply error(int status, std::string_view code, std::string_view message,
                     nlohmann::json extra = nlohmann::json::object()) {
    nlohmann::json j = std::move(extra);
    j["error"] = message;
    j["code"] = code;
    return Reply{status, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)};
  }
};

}  // namespace runledger

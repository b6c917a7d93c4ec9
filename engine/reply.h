// Reply: what a request gets back, already rendered (status + JSON body).
// The engine keeps replies of mutating requests for idempotency, so a reply
// is plain data.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

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

  // How far the log behind a read goes (on a cluster's standby, how far it
  // has followed the leader's): every read says it.
  static constexpr std::string_view kSeqHeader = "X-Runledger-Seq";
  bool has_seq() const { return headers.find(kSeqHeader) != std::string::npos; }
  void add_seq(uint64_t seq) {
    headers.append(kSeqHeader).append(": ").append(std::to_string(seq)).append("\r\n");
  }
};

}  // namespace runledger

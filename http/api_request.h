// ApiRequest: one HTTP request as the route handlers see it, independent of
// the HTTP library: method, path parameters, query, raw body, the caller.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace runledger::http {

// The actor and caller of a request made without authentication.
inline constexpr char kAnonymousCaller[] = "anonymous";

struct ApiRequest {
  std::string method;
  std::string path;                           // decoded path, no query
  std::map<std::string, std::string> params;  // from the route pattern
  std::multimap<std::string, std::string> query;
  std::string body;
  std::string actor = kAnonymousCaller;
  // Who the request's idempotency key belongs to: the token's name, or
  // "anonymous" without authentication, where every caller is one (the
  // actor header names a person for the log, not a caller).
  std::string caller = kAnonymousCaller;
  // The caller's role ("reader", "worker", "operator"): every caller is an
  // operator when authentication is off.
  std::string role = "operator";
  bool authenticated = false;   // a bearer token named the caller
  std::string idempotency_key;  // empty: none
  std::string last_event_id;    // SSE resume header

  const std::string& param(const std::string& name) const { return params.at(name); }
  // The query value, or nullptr when absent.
  const std::string* query_value(const std::string& name) const {
    auto it = query.find(name);
    return it == query.end() ? nullptr : &it->second;
  }
};

// Thrown by handlers for a request refused before it reaches the engine.
struct ApiError {
  int status;
  std::string code;
  std::string message;
  nlohmann::json extra = nlohmann::json::object();
};

}  // namespace runledger::http

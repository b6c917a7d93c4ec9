#include "http/request_entry.h"

#include "http/handler_support.h"
#include "http/json_input.h"
#include "http/path_segments.h"
#include "http/query_parameters.h"
#include "http/query_text.h"

namespace runledger::http {
namespace {

// Printable ASCII, the space included (0x20-0x7e): "alice smith" is an actor.
bool printable(std::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) return false;
  }
  return true;
}

// GET /v1/health and /v1/health/leader answer without a token, however
// their paths are spelled: load balancers and probes carry none.
bool health_path(std::string_view path) {
  const std::vector<std::string> segments = split_path(path);
  return (segments.size() == 2 || (segments.size() == 3 && segments[2] == "leader")) &&
         segments[0] == "v1" && segments[1] == "health";
}

}  // namespace

std::optional<Reply> check_host_fields(ParsedRequest& in) {
  std::string* host = nullptr;
  for (auto& [name, value] : in.headers) {
    if (!iequals(name, "Host")) continue;
    if (host != nullptr) {
      return Reply::error(400, "bad_request", "a request carries at most one Host field");
    }
    host = &value;
  }
  if (!in.authority.empty()) {
    if (host != nullptr) {
      *host = in.authority;
    } else {
      in.headers.emplace_back("Host", in.authority);
    }
    return std::nullopt;
  }
  if (host == nullptr && in.version_minor == 1) {
    return Reply::error(400, "bad_request", "an HTTP/1.1 request must carry a Host field");
  }
  return std::nullopt;
}

void read_target(std::string_view target, ApiRequest& a) {
  const size_t query_at = target.find('?');
  a.path = target.substr(0, query_at);
  a.query.clear();
  if (query_at != std::string_view::npos) a.query = parse_query(target.substr(query_at + 1));
}

std::optional<Reply> read_api_headers(const HeaderList& headers, const Auth* auth, ApiRequest& a,
                                      std::optional<Role>* role) {
  size_t authorizations = 0;
  for (const auto& [name, value] : headers)
    authorizations += iequals(name, "Authorization") ? 1 : 0;
  if (authorizations > 1) {
    // Which one would count depends on who reads the request: refused, as
    // two Content-Length fields that disagree are.
    return Reply::error(400, "bad_request", "a request carries at most one Authorization field");
  }
  if (auth != nullptr && !health_path(a.path)) {
    const std::string* authorization = find_header(headers, "Authorization");
    auto who = auth->authenticate(authorization != nullptr ? *authorization : "");
    if (!who) {
      return Reply::error(401, "unauthorized",
                          "a valid bearer token is required (Authorization: Bearer <token>)");
    }
    if (!allowed(who->role, a.method, a.path)) {
      return Reply::error(403, "forbidden",
                          "token '" + who->name + "' may not " + a.method + " " + a.path);
    }
    if (role != nullptr) *role = who->role;
    a.role = role_name(who->role);
    a.authenticated = true;
    a.actor = who->name;  // the token's name is the actor, whatever headers say
    a.caller = who->name;
  } else if (const std::string* actor = find_header(headers, "X-Runledger-Actor")) {
    if (actor->empty() || actor->size() > kActorBytesMax || !printable(*actor)) {
      return Reply::error(422, "invalid_field",
                          "header X-Runledger-Actor must be 1-" + std::to_string(kActorBytesMax) +
                              " printable characters",
                          {{"field", "X-Runledger-Actor"}});
    }
    a.actor = *actor;
  }
  if (const std::string* key = find_header(headers, "Idempotency-Key")) {
    if (key->empty() || key->size() > kIdempotencyKeyBytesMax || !printable(*key)) {
      return Reply::error(422, "invalid_field",
                          "header Idempotency-Key must be 1-" +
                              std::to_string(kIdempotencyKeyBytesMax) + " printable characters",
                          {{"field", "Idempotency-Key"}});
    }
    a.idempotency_key = *key;
  }
  if (const std::string* last = find_header(headers, "Last-Event-ID")) a.last_event_id = *last;
  return std::nullopt;
}

std::optional<Reply> find_route(const Router& router, ApiRequest& a, const Router::Route** route) {
  switch (router.route(a, route)) {
    case Router::Match::kNoPath:
      return Reply::error(404, "not_found", "no such route: " + a.path);
    case Router::Match::kNoMethod:
      return Reply::error(405, "method_not_allowed", a.method + " is not allowed on " + a.path);
    case Router::Match::kFound:
      break;
  }
  if (auto refused = refuse_query((*route)->method, (*route)->pattern, a)) return refused;
  // No job, connector, hold or sync has an id outside the alphabet
  // (docs/api.md), so such a path names nothing, whatever it asks: 404 before
  // any handler, which would otherwise take it for a stream name the store
  // refuses, or record a report of a sync id no sync ever had.
  const std::vector<std::string>& pattern = (*route)->segments;
  for (size_t i = 1; i < pattern.size(); ++i) {
    if (pattern[i] != "{id}" && pattern[i] != "{sync_id}") continue;
    const std::string& id = a.param(pattern[i].substr(1, pattern[i].size() - 2));
    if (valid_id(id)) continue;
    std::string what = pattern[i - 1];  // "jobs", "connectors", "holds", "syncs"
    if (!what.empty() && what.back() == 's') what.pop_back();
    return Reply::error(
        404, "not_found",
        "no " + what + " has that id: ids are 1-128 characters of A-Z a-z 0-9 . _ : -");
  }
  return std::nullopt;
}

Answer run_handler(const Router::Route& route, ApiRequest& a) {
  try {
    return route.handler(a);
  } catch (const ApiError& e) {
    return api_error_reply(e);
  } catch (const FieldError& e) {
    return field_error_reply(e);
  } catch (const std::exception& e) {
    return Reply::error(500, "internal_error", std::string("the request failed: ") + e.what());
  }
}

}  // namespace runledger::http

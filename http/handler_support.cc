#include "http/handler_support.h"

#include <charconv>
#include <set>
#include <stdexcept>
#include <vector>

#include "base/json_depth.h"
#include "base/number_overflow.h"
#include "engine/idempotency.h"
#include "http/rejection_status.h"
#include "projections/limits.h"

namespace runledger::http {

nlohmann::json parse_body(const ApiRequest& r) {
  bool blank = true;
  for (char c : r.body) blank = blank && (c == ' ' || c == '\n' || c == '\r' || c == '\t');
  if (blank) return nlohmann::json::object();
  if (auto deep = json_too_deep(r.body, kJsonBodyDepthMax)) {
    // Checked without building the tree; whether the text is JSON at all
    // decides between 400 and 422, as it does for any other body.
    if (!nlohmann::json::accept(r.body)) {
      throw ApiError{400, "invalid_json", "the body is not valid JSON"};
    }
    if (deep->field.empty()) {
      throw ApiError{400, "invalid_json", "the body must be a JSON object"};
    }
    throw FieldError{"invalid_field", deep->field,
                     "field '" + deep->field + "' nests arrays and objects too deeply: a body " +
                         "nests at most " + std::to_string(kJsonBodyDepthMax) +
                         " levels, itself the first"};
  }
  // A key given twice in one object would quietly lose one of its values
  // (the parser keeps the last): refused, at any depth.
  std::vector<std::set<std::string>> open_objects;
  std::string duplicate;
  auto watch_keys = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start) open_objects.emplace_back();
    if (event == Event::object_end && !open_objects.empty()) open_objects.pop_back();
    if (event == Event::key && !open_objects.empty() && duplicate.empty() &&
        !open_objects.back().insert(parsed.get<std::string>()).second) {
      duplicate = parsed.get<std::string>();
    }
    return true;
  };
  auto j = nlohmann::json::parse(r.body, watch_keys, /*allow_exceptions=*/false);
  if (!j.is_discarded() && !duplicate.empty()) {
    throw FieldError{"duplicate_field", duplicate,
                     "field '" + duplicate + "' is given twice in one object"};
  }
  if (j.is_discarded()) {
    if (auto field = overflowing_number_path(r.body)) {
      throw FieldError{"invalid_field", *field,
                       "field '" + *field + "' holds a number too large to represent"};
    }
    throw ApiError{400, "invalid_json", "the body is not valid JSON"};
  }
  if (!j.is_object()) throw ApiError{400, "invalid_json", "the body must be a JSON object"};
  return j;
}

Reply rejection_reply(const Rejection& r) {
  return Reply::error(http_status(r.code), std::string(code_name(r.code)), r.message, r.extra);
}

std::string new_id(std::string_view prefix) { return std::string(prefix) + "-" + random_hex(8); }

Reply field_error_reply(const FieldError& e) {
  return Reply::error(422, e.code, e.message, {{"field", e.field}});
}

Reply api_error_reply(const ApiError& e) {
  return Reply::error(e.status, e.code, e.message, e.extra);
}

namespace {

// The actor, and the key with the request's fingerprint when one was given:
// what every request to the engine carries from its HTTP request.
void take_key(const ApiRequest& r, bool body_over_limit, Request* req) {
  req->actor = r.actor;
  if (r.idempotency_key.empty()) return;
  req->idempotency_key = r.idempotency_key;
  // A path holds no space, so no request that was read has this fingerprint.
  const std::string path = body_over_limit ? r.path + " (body over the limit)" : r.path;
  const std::string_view body = body_over_limit ? std::string_view() : r.body;
  req->fingerprint = request_fingerprint(r.caller, r.method, path, body);
  if (r.caller == kAnonymousCaller) {
    req->legacy_fingerprint = legacy_request_fingerprint(r.method, path, body);
  }
}

}  // namespace

Answer prepare_command(ApiRequest& r,
                       const std::function<Request(const nlohmann::json& body)>& build) {
  Request req;
  try {
    req = build(parse_body(r));
  } catch (const FieldError& e) {
    req.fixed_reply = field_error_reply(e);
  } catch (const ApiError& e) {
    req.fixed_reply = api_error_reply(e);
  }
  if (req.fixed_reply && r.idempotency_key.empty()) return std::move(*req.fixed_reply);
  take_key(r, /*body_over_limit=*/false, &req);
  return Answer(std::move(req));
}

bool keyed_method(std::string_view method) {
  return method == "POST" || method == "PATCH" || method == "DELETE";
}

std::optional<Request> keep_under_key(const ApiRequest& r, Reply reply, bool body_over_limit) {
  if (r.idempotency_key.empty() || !keyed_method(r.method)) return std::nullopt;
  Request req;
  req.fixed_reply = std::move(reply);
  take_key(r, body_over_limit, &req);
  return req;
}

int64_t query_int(const ApiRequest& r, const std::string& name, int64_t fallback, int64_t min,
                  int64_t max) {
  const std::string* v = r.query_value(name);
  if (v == nullptr) return fallback;
  int64_t n = 0;
  auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
  if (ec != std::errc() || ptr != v->data() + v->size() || n < min || n > max) {
    throw ApiError{422,
                   "invalid_query",
                   "query parameter '" + name + "' must be an integer between " +
                       std::to_string(min) + " and " + std::to_string(max),
                   {{"field", name}}};
  }
  return n;
}

std::optional<bool> query_bool(const ApiRequest& r, const std::string& name) {
  const std::string* v = r.query_value(name);
  if (v == nullptr) return std::nullopt;
  if (*v == "true") return true;
  if (*v == "false") return false;
  throw ApiError{422,
                 "invalid_query",
                 "query parameter '" + name + "' must be true or false",
                 {{"field", name}}};
}

std::optional<std::string> query_id(const ApiRequest& r, const std::string& name) {
  const std::string* v = r.query_value(name);
  if (v == nullptr) return std::nullopt;
  if (!valid_id(*v)) {
    throw ApiError{422,
                   "invalid_query",
                   "query parameter '" + name + "' must be an id: 1-" +
                       std::to_string(limits::kIdBytesMax) + " characters of A-Z a-z 0-9 . _ : -",
                   {{"field", name}}};
  }
  return *v;
}

}  // namespace runledger::http

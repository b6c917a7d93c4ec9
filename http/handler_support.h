// What every route handler shares: body parsing, turning refusals into
// replies, random ids and tokens, and the path that takes a validated
// request through the engine with its idempotency key.
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "base/random_bytes.h"
#include "engine/engine.h"
#include "http/api_request.h"
#include "http/json_input.h"
#include "http/router.h"

namespace runledger::http {

// The bound of free text that the deciders store cut (a sync failure's
// last_error, a step failure's error, an outcome-unknown's detail): often a
// stack trace, kept cut rather than refused, so only the body limit
// (--body-limit-bytes, at most 64 MiB) bounds it.
inline constexpr size_t kCutTextBytesMax = 64 * 1024 * 1024;

// The request body as a JSON object: an empty body is {}; invalid JSON or a
// non-object throws ApiError 400.
nlohmann::json parse_body(const ApiRequest& r);

// A refusal from a decider as an error reply.
Reply rejection_reply(const Rejection& r);

// A server-made id, e.g. "job-3f9a...": 16 random hex digits after the prefix.
std::string new_id(std::string_view prefix);

// Builds the engine request from the parsed body (may throw FieldError or
// ApiError: those become 422/4xx replies, recorded under the idempotency key
// like any first reply), for the server to submit. Never waits.
Answer prepare_command(ApiRequest& r,
                       const std::function<Request(const nlohmann::json& body)>& build);

// Whether a request of this method may carry an Idempotency-Key (docs/api.md:
// POST, PATCH and DELETE).
bool keyed_method(std::string_view method);
// `reply`, a 4xx refusal the server made before any handler ran (no such
// route, method not allowed, body over the limit), as a request that keeps it
// under the request's Idempotency-Key like any first reply. nullopt when the
// request carries no key or its method takes none. `body_over_limit`: the
// body was never read; the fingerprint says so instead of hashing it.
std::optional<Request> keep_under_key(const ApiRequest& r, Reply reply, bool body_over_limit);

// An integer query parameter within bounds (422 naming it otherwise).
int64_t query_int(const ApiRequest& r, const std::string& name, int64_t fallback, int64_t min,
                  int64_t max);
// A boolean query parameter ("true"/"false"), nullopt when absent.
std::optional<bool> query_bool(const ApiRequest& r, const std::string& name);
// A query parameter that names an entity by id (valid_id), nullopt when absent.
std::optional<std::string> query_id(const ApiRequest& r, const std::string& name);

// 422 for a field error.
Reply field_error_reply(const FieldError& e);
Reply api_error_reply(const ApiError& e);

}  // namespace runledger::http

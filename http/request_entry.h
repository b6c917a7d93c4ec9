// The steps of a request between the HTTP parser and the engine: the target
// split into path and query, the headers every route reads (the caller, the
// idempotency key, the live stream's cursor), the route, and the handler
// with what it throws turned into replies. The server (http/connection.cc)
// and the HTTP fuzzer (fuzz/api_under_test.cc) both run these, so the
// fuzzer exercises the server's own code below the socket.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/reply.h"
#include "http/api_request.h"
#include "http/auth.h"
#include "http/request_parser.h"
#include "http/router.h"

namespace runledger::http {

inline constexpr size_t kActorBytesMax = 128;
inline constexpr size_t kIdempotencyKeyBytesMax = 128;

// The Host rules of HTTP/1.1 (RFC 9112 3.2): an HTTP/1.1 request carries
// exactly one Host field (400 otherwise); an absolute-form target's
// authority stands for the Host, which it replaces.
std::optional<Reply> check_host_fields(ParsedRequest& in);

// Sets a.path (raw: the router decodes each segment) and a.query (decoded).
void read_target(std::string_view target, ApiRequest& a);

// Reads the headers every route shares into `a`; the refusal when they do
// not do (401, 403, 422 naming the header). `auth`: null when requests are
// not authenticated; when they are, the token's name is the actor whatever
// X-Runledger-Actor says, and *role (if given) is set to the token's role.
// GET /v1/health needs no token.
std::optional<Reply> read_api_headers(const HeaderList& headers, const Auth* auth, ApiRequest& a,
                                      std::optional<Role>* role = nullptr);

// The route for a.method and a.path (filling a.params); 404 or 405 otherwise.
std::optional<Reply> find_route(const Router& router, ApiRequest& a, const Router::Route** route);

// Runs a route's handler; a refusal it throws (ApiError, FieldError) is its
// reply, and anything else it throws is a 500.
Answer run_handler(const Router::Route& route, ApiRequest& a);

}  // namespace runledger::http

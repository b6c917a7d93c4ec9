// Requests a web page could make the operator's browser send
// (docs/operations.md, "What the HTTP API refuses, and why").
//
// A page on another site can make a browser send a POST with no preflight
// when its body is text/plain, a form or untyped, and can read any reply
// once DNS rebinding points a name of its own at this server. With
// authentication off (the default on loopback) nothing else would stop
// such a request, so every request passes three checks before anything of
// it runs:
//   - with authentication off, the Host must be a loopback name or the
//     listen address (421): a rebound name is neither;
//   - an Origin, when sent, must be the server's own (403): browsers send
//     it with every cross-origin request, and with every POST;
//   - a request with a body, or a Content-Type, must be application/json
//     (415): the types a page may send cross-site with no preflight are not.
// Requests that send no Origin (curl, the CLI, workers) and JSON bodies pass.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "engine/reply.h"
#include "http/request_parser.h"

namespace runledger::http {

struct SiteRules {
  // Authentication is off: only a loopback Host or the listen host is served.
  bool local_host_only = false;
  // The host of --listen, without port or brackets (e.g. "127.0.0.1", "::1").
  std::string listen_host;
};

// Whether `host` (no port, no brackets) names this machine's loopback:
// "localhost" and names under ".localhost", 127.0.0.0/8, ::1.
bool loopback_host(std::string_view host);

// The refusal of a request whose headers say it may come from another site
// (421, 403 or 415, in the API's error shape), or nullopt. `method` as sent;
// `body_bytes`: the size of the request's body.
std::optional<Reply> refuse_cross_site(const HeaderList& headers, std::string_view method,
                                       size_t body_bytes, const SiteRules& rules);

}  // namespace runledger::http

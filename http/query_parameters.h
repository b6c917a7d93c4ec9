// The query parameters each route takes (docs/api.md): written once, here,
// and checked for every request before its handler runs. A parameter the
// route does not take, or one given twice that is not repeatable, is a 422:
// a misspelt filter (`?stat=RUNNING`) must not quietly list everything.
#pragma once

#include <optional>
#include <string_view>

#include "engine/reply.h"
#include "http/api_request.h"

namespace runledger::http {

// The refusal of a.query for the route `method` + `pattern` (as registered,
// e.g. "/v1/jobs/{id}"), or nullopt when every parameter is one it takes.
std::optional<Reply> refuse_query(std::string_view method, std::string_view pattern,
                                  const ApiRequest& a);

}  // namespace runledger::http

// The OpenAPI 3 document of the HTTP API (GET /v1/openapi.json).
#pragma once

#include <string>

namespace runledger::http {
const std::string& openapi_document();
}

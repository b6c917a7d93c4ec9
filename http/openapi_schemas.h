// The schemas of the OpenAPI document (http/openapi.cc): the JSON bodies the
// API takes and answers, field by field. The field names are those of the
// views and route handlers; tests/http/openapi_*_test.cc check real replies
// against them, so a field added to a view and not here fails a test.
#pragma once

#include <nlohmann/json.hpp>

namespace runledger::http::openapi {

// components.schemas: Job, Connector, Hold, Event, Error...
nlohmann::json component_schemas();

// An entity's id (projections/limits.h).
nlohmann::json id_schema();

// A reference to one of component_schemas().
nlohmann::json ref(const char* name);

}  // namespace runledger::http::openapi

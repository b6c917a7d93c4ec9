// Log records as JSON: the payload generated from the schema, and the whole
// event as the HTTP API, `runledger events` and export files show it.
// Thread-safe: the schema's parser is built once and only read after.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "events/event_generated.h"

namespace runledger {

// How event data is rendered. kReaders: as the API shows it (a job's input
// and a step's output as the JSON given, an unset time as null, a
// connector's absent schedule as null, as its view shows it).
// kExportVersion2 and kExportVersion1: as export files of those versions
// carry it, so that import still checks such files: version 2 had an absent
// schedule as 0; version 1 also had those two as JSON text and an unset
// time as the epoch.
enum class DataRendering : uint8_t { kReaders, kExportVersion2, kExportVersion1 };

// The payload alone as JSON, generated from the schema (field names as in
// event.fbs; `X_ms` times shown as `X` in RFC 3339).
nlohmann::json event_data_json(const fb::Event& event,
                               DataRendering rendering = DataRendering::kReaders);

// The event as the HTTP API and `runledger events` show it:
// {"seq","stream","version","type","recorded_at","actor","command_id","data"}.
nlohmann::json event_json(const fb::Event& event,
                          DataRendering rendering = DataRendering::kReaders);

}  // namespace runledger

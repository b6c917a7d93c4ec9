// The export file of `runledger export` / `import`: JSON Lines.
//
//   line 1   {"format": "runledger-export", "version": 3,
//             "log_format": "runledger-log-1", "events": N, "last_hash": "<64 hex>"}
//   line 2.. the event JSON of the API (`event_json`) with one more field,
//            "bytes": the event exactly as stored, base64 (RFC 4648).
//
// The JSON is for people and tools; the bytes are what import appends, so
// the imported log has the same bytes and therefore the same hash chain. An
// import checks that each line's bytes decode to its JSON, that the chain
// holds, and that the count and the last hash are the header's.
//
// Older files carried the event data as it was shown then: version 2 a
// connector's absent schedule as 0 (now null, as its view shows it), version
// 1 also a job's input and a step's output as JSON text and an unset time as
// the epoch. Import still reads them, checking each line against the
// rendering of its version.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/json_depth.h"

namespace runledger::cli {

inline constexpr std::string_view kExportFormat = "runledger-export";
inline constexpr int kExportVersion = 3;
inline constexpr int kExportVersionOldestRead = 1;
inline constexpr std::string_view kExportBytesField = "bytes";
// How deeply an event's line may nest: its data holds a job's input or a
// step's output, each no deeper than a request body, a few levels down.
inline constexpr size_t kExportLineDepthMax = 2 * kJsonBodyDepthMax;

}  // namespace runledger::cli

// Encoding and decoding of log records (see events/event.fbs for the format);
// their JSON form is events/event_json.h.
//
// encode_event() builds the exact bytes that are stored and hashed; it is
// deterministic: the same draft always gives the same bytes, which is what
// lets export/import and replay reproduce the hash chain.
// decode_event() runs the FlatBuffers verifier before handing out a pointer:
// no byte read back from disk is trusted unverified.
// Thread-safe: all functions may be called from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/sha256.h"
#include "base/status.h"
#include "events/event_generated.h"

namespace runledger {

// An event about to be appended; the sequencer fills every field.
struct EventDraft {
  uint64_t seq = 0;
  std::string_view stream;
  uint32_t stream_version = 0;
  int64_t recorded_at_ms = 0;
  std::string_view actor;
  std::string_view command_id;
  Hash prev_hash{};
  const fb::PayloadUnion* payload = nullptr;
};

// Appends the encoded bytes of `draft` to `out` (cleared first).
void encode_event(const EventDraft& draft, std::string* out);

// Verifies `bytes` as an Event and points `*event` into them (zero-copy; valid
// as long as `bytes` is). Corruption when the buffer does not verify or the
// envelope is incomplete.
Status decode_event(std::string_view bytes, const fb::Event** event);

// The event type as the log and the JSON show it, e.g. "JobEnqueued".
std::string_view event_type_name(fb::Payload type);

// Whether `name` is the name of an event type (NONE is not one): how the
// `type` filters of the API and the CLI check what they are given.
bool is_event_type_name(std::string_view name);

}  // namespace runledger

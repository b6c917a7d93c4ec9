// The log's fingerprint for reproducibility: a hash chain over every event as
// JSON (seq, stream, version, type, time, actor, data), in which the ids the
// engine draws at random (command ids "c-<16 hex>", holds placed on lease
// expiry "hold-<16 hex>", syncs started by the schedule "sync-<16 hex>") are
// renamed by order of first appearance. Two runs of one seed must give the
// same fingerprint: the same commands decided the same way in the same order.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "events/event_store.h"

namespace runledger::testing {

struct LogFingerprint {
  uint64_t events = 0;
  std::string last_event_hash;  // hex, of the last event's normalized JSON chain
  std::string raw_last_hash;    // hex, the store's own hash of its last event
  std::string error;
};

LogFingerprint log_fingerprint(const EventStore& store);

// `text` with every engine-made random id replaced by "<prefix>#<n>", n
// counted in `names` (shared across calls so ids keep their names).
std::string normalize_ids(const std::string& text, std::map<std::string, std::string>& names);

}  // namespace runledger::testing

// verify_log(): the offline audit of a whole event log. It trusts nothing the
// store computed at open and re-derives every invariant from the stored bytes:
//   - every event decodes (FlatBuffers verifier) and sits under its own seq;
//   - seqs run from 1 without a gap;
//   - each stream's versions run from 1 without a gap;
//   - each prev_hash is the SHA-256 of the previous event's bytes (zeros for
//     seq 1), and the store's last_hash is the hash of the last event;
//   - the stream index holds every (stream, version) and points at its event.
// The first problem ends the walk: kCorruption naming the first bad seq and
// why. Memory: one entry per stream (its latest version and seq).
//
// Which seq a broken hash link names: when seq K's prev_hash is not the hash
// of seq K-1, either K-1's bytes or K's were altered. If K's own hash is what
// K+1 recorded, K is intact and K-1 is named; otherwise K is named. With no
// K+1 to tell, K-1 is named: the first seq the chain no longer vouches for.
//
// Thread-safe as the store's reads are: it may run against a store that is
// being appended to; it checks the log up to the last_seq seen at its start.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "base/sha256.h"
#include "base/status.h"
#include "events/event_store.h"

namespace runledger {

struct VerifyReport {
  uint64_t events = 0;   // events checked
  uint64_t streams = 0;  // distinct streams seen
  uint64_t last_seq = 0;
  Hash last_hash{};
};

struct VerifyProgress {
  std::string_view phase;  // "log" (the walk) or "index" (the stream index)
  uint64_t done = 0;
  uint64_t total = 0;
};

// Progress is reported every kVerifyProgressEvery items and at each phase end.
inline constexpr uint64_t kVerifyProgressEvery = 100'000;

using VerifyProgressFn = std::function<void(const VerifyProgress&)>;
// A further check of each event, e.g. folding it to check that it is an
// allowed transition. A non-OK result ends the walk and is returned as it is
// (a corruption without a seq gets the event's).
using VerifyEventCheck = std::function<Status(const fb::Event& event, std::string_view bytes)>;

// `check`, when set, sees every event that passed the log checks, in seq
// order, during the same walk.
Status verify_log(const EventStore& store, VerifyReport* report,
                  const VerifyProgressFn& progress = {}, const VerifyEventCheck& check = {});

}  // namespace runledger

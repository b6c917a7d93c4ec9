// The index of the stored views of finished entities. It lives in the views
// column family beside the views, so that a filtered listing
// (GET /v1/jobs?state=FAILED, ?target=, ?kind=; GET /v1/holds?target=) reads
// the ids that match instead of parsing the view of every job that ever
// finished: with 300,000 finished jobs such a listing took 4 s.
//
//   key                                   value
//   index/ready                           "1": every stored view is indexed
//   index/job/state/<len><STATE><id>      ""
//   index/job/target/<len><target><id>   ""
//   index/job/kind/<len><kind><id>       ""
//   index/hold/target/<len><target><id>  ""
//   index/count/job/<STATE>               how many stored job views have that
//                                         state (decimal; absent: none)
//
// <len> is the length of the value that follows, 2 bytes big-endian: a
// target may hold any bytes, and no id can be read as part of it. Under one
// value the keys sort as the ids do, which is the order of a listing.
//
// The entries of a view are written and deleted in the same batch as the
// view itself (add_view_writes), and so are the counts, which the metrics
// report without reading the index. A store written before the index existed has no
// "index/ready": a writable start builds the index once (build); until then,
// and on a read-only start, listings scan the views as before.
// Thread-safe: no state of its own.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "events/event_store.h"
#include "projections/state.h"

namespace runledger::view_index {

// Every key of the index starts with this; no stream name does.
inline constexpr std::string_view kKeyPrefix = "index/";
inline constexpr std::string_view kReadyKey = "index/ready";

enum class Field : uint8_t { kJobState, kJobTarget, kJobKind, kHoldTarget };

// The keys of the entities whose `field` is `value` start with this.
std::string prefix(Field field, std::string_view value);

using ViewWrites = std::vector<std::pair<std::string, std::optional<std::string>>>;

// Stored job views by state: SUCCEEDED, FAILED, CANCELLED, in that order.
inline constexpr size_t kFinishedStates = 3;
using FinishedCounts = std::array<int64_t, kFinishedStates>;
// The state names of FinishedCounts' slots.
extern const std::array<const char*, kFinishedStates> kFinishedStateNames;

// The index entries of the entity behind `stream` if it is finished and in
// memory (what its stored view is indexed under); empty otherwise.
std::vector<std::string> entries_of(const State& s, std::string_view stream);

// What the views family needs after a batch touched `stream`: the view and
// its index entries when the entity is finished. `stored` is null unless the
// entity was finished before the batch (its entries_of() then): a rerun
// deletes its view and those entries, since memory answers for it now, and
// entries that a finished entity no longer has are deleted.
// `counts` gets what the writes change of the stored job views by state.
void add_view_writes(const State& s, std::string_view stream,
                     const std::vector<std::string>* stored, ViewWrites* out,
                     FinishedCounts* counts);

// The writes that store `counts`: every slot that differs from `before`
// (what is stored now; nullptr: every slot).
void add_count_writes(const FinishedCounts& counts, const FinishedCounts* before, ViewWrites* out);

// The stored counts (zeros on a store without any).
Status read_counts(const EventStore& store, FinishedCounts* counts);

// True when every stored view is indexed (kReadyKey is present).
bool ready(const EventStore& store);

// Indexes every stored view of a store written before the index existed,
// then marks it ready; does nothing on a store that is ready. A view that is
// not JSON is left out (a listing that scans skips it too). `indexed` gets
// the number of views indexed.
Status build(EventStore& store, size_t* indexed);

// replay --compare's check of a ready index against the stored views: one
// line per entry that is missing, or that names an entity whose view is gone
// or says otherwise, and per count that is not the number of its entries.
// Nothing on a store that is not ready.
Status check(const EventStore& store, std::vector<std::string>* problems);

}  // namespace runledger::view_index

// Reads shared by the job, connector and hold routes: one entity (memory
// first, then the view the store keeps for finished entities), an entity as
// of a past seq (folded from its stream), a stream's events, and listings
// that merge live entities with finished ones.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/engine.h"
#include "http/api_request.h"

namespace runledger::http {

// The most entities one page of a listing holds (`limit`).
inline constexpr size_t kListLimitMax = 1000;

// Renders the live entity behind `stream` from the state, or nullopt when it
// is not in memory.
using LiveView = std::function<std::optional<nlohmann::json>(const State& s)>;

// 200 with the entity (live or finished), 404 `not_found` with `what` named.
Reply read_entity(Engine& engine, const std::string& stream, const LiveView& live,
                  const std::string& what);

// Folds into a scratch state, up to the seq given, the other streams an
// entity's view as of that seq depends on.
using AsOfContext = std::function<Status(State& scratch, uint64_t as_of)>;

// The entity right after global event `as_of` (the `as_of` query), or 404.
// `render` gets a scratch state folded from the stream up to that seq, and
// then by `context`, if given.
Reply read_as_of(Engine& engine, const ApiRequest& r, const std::string& stream,
                 const LiveView& render, const std::string& what,
                 const AsOfContext& context = nullptr);

// Folds into `scratch`, up to `as_of`, every job and hold on `target` that it
// does not hold yet: the live ones in memory and the finished ones in the
// store. A job's blocked_by as of a seq is the job that held its target then
// and the blocking holds on it then, and neither a job nor a hold ever
// changes target, so these are all that it can name.
Status fold_target_as_of(Engine& engine, const std::string& target, uint64_t as_of, State& scratch);

// A page of the stream's events (docs/api.md "Events"): those after the
// version `after` (query, exclusive), at most `limit` (default 1000, at most
// 10000): 200 {"events": [...], "next_after": the version of the last one,
// or `after` when none}; 404 when the stream never existed.
Reply stream_events(Engine& engine, const ApiRequest& r, const std::string& stream,
                    const std::string& what);

// Where a listing looks for the finished entities that pass its filter.
struct StoredMatches {
  enum class Mode : uint8_t {
    kScan,     // every stored view (no filter, or no index for it)
    kIndexed,  // the ids under `index_prefix` (engine/view_index.h)
    kNone,     // no finished entity can pass (e.g. state=RUNNING)
  };
  Mode mode = Mode::kScan;
  std::string index_prefix;
};

// A page of entities ordered by id: live ones from memory merged with
// finished ones from the store's views under `prefix` ("job/", "hold/").
// `live_page` runs on the sequencer and returns up to limit+1 live views with
// id > after that pass the filter; `keep` filters stored views, also those
// found through the index. A store whose index is not built yet is scanned.
struct Page {
  nlohmann::json items = nlohmann::json::array();
  std::optional<std::string> next;
};
Page list_entities(Engine& engine, const std::string& prefix, const std::string& after,
                   size_t limit,
                   const std::function<std::vector<nlohmann::json>(const State&)>& live_page,
                   const std::function<bool(const nlohmann::json&)>& keep,
                   const StoredMatches& stored);

}  // namespace runledger::http

#include "http/entity_reads.h"

#include <charconv>
#include <limits>
#include <map>

#include "engine/entities.h"
#include "engine/view_index.h"
#include "events/event_json.h"
#include "http/handler_support.h"
#include "http/page_build_slots.h"
#include "projections/stream_name.h"

namespace runledger::http {

Reply read_entity(Engine& engine, const std::string& stream, const LiveView& live,
                  const std::string& what) {
  // The marker status 0 means "not in memory": look in the store instead.
  Reply r = engine.read([&](const State& s, const Decision*) {
    auto view = live(s);
    return view ? Reply::json(200, *view) : Reply{0, ""};
  });
  if (r.status != 0) return r;
  std::string stored;
  Status st = engine.store().get_view(stream, &stored);
  if (st.ok()) return Reply{200, std::move(stored)};
  if (st.code() != Status::Code::kNotFound) {
    return Reply::error(503, "unavailable", "reading the store failed: " + st.ToString());
  }
  return Reply::error(404, "not_found", what + " not found");
}

Reply read_as_of(Engine& engine, const ApiRequest& r, const std::string& stream,
                 const LiveView& render, const std::string& what, const AsOfContext& context) {
  auto as_of = static_cast<uint64_t>(query_int(r, "as_of", 0, 1, INT64_MAX));
  State scratch;
  Status st = hydrate(engine.store(), scratch, stream, as_of);
  if (st.ok() && context) st = context(scratch, as_of);
  if (!st.ok()) return Reply::error(503, "unavailable", "reading the log failed: " + st.ToString());
  auto view = render(scratch);
  if (!view) {
    return Reply::error(404, "not_found", what + " did not exist at seq " + std::to_string(as_of));
  }
  return Reply::json(200, *view);
}

namespace {

constexpr int64_t kStreamEventsLimitDefault = 1000;
constexpr int64_t kStreamEventsLimitMax = 10000;

}  // namespace

Reply stream_events(Engine& engine, const ApiRequest& r, const std::string& stream,
                    const std::string& what) {
  const auto after =
      static_cast<uint32_t>(query_int(r, "after", 0, 0, std::numeric_limits<uint32_t>::max()));
  const auto limit = static_cast<size_t>(
      query_int(r, "limit", kStreamEventsLimitDefault, 1, kStreamEventsLimitMax));
  uint32_t version = 0;
  Status st = engine.store().stream_version(stream, &version);
  if (!st.ok()) return Reply::error(503, "unavailable", "reading the log failed: " + st.ToString());
  if (version == 0) return Reply::error(404, "not_found", what + " not found");
  const PageBuildSlot slot;
  nlohmann::json events = nlohmann::json::array();
  uint32_t last = after;
  st = engine.store().read_stream_from(stream, after, 0, [&](const fb::Event& e, std::string_view) {
    events.push_back(event_json(e));
    last = e.stream_version();
    return events.size() < limit;
  });
  if (!st.ok()) return Reply::error(503, "unavailable", "reading the log failed: " + st.ToString());
  return Reply::json(200, {{"events", std::move(events)}, {"next_after", last}});
}

namespace {

// Ids read from the index per scan: each chunk's views are read after its
// scan is closed.
constexpr size_t kIndexChunk = 256;

using StoredVisit = std::function<bool(std::string_view id, nlohmann::json view)>;

// Every stored view under `prefix` after `after`, in id order, until `visit`
// returns false.
void scan_stored(const EventStore& store, const std::string& prefix, const std::string& after,
                 const StoredVisit& visit) {
  const std::string after_key = after.empty() ? "" : prefix + after;
  store
      .scan_views(prefix, after_key,
                  [&](std::string_view key, std::string_view value) {
                    auto v = nlohmann::json::parse(value, nullptr, false);
                    if (v.is_discarded()) return true;
                    return visit(key.substr(prefix.size()), std::move(v));
                  })
      .IgnoreError();  // a failed scan shows fewer finished entities, never wrong ones
}

// The same for the ids under `index_prefix` only.
void read_indexed(const EventStore& store, const std::string& prefix,
                  const std::string& index_prefix, const std::string& after,
                  const StoredVisit& visit) {
  std::string after_key = after.empty() ? "" : index_prefix + after;
  std::vector<std::string> ids;
  std::string value;
  for (;;) {
    ids.clear();
    Status s =
        store.scan_views(index_prefix, after_key, [&](std::string_view key, std::string_view) {
          ids.emplace_back(key.substr(index_prefix.size()));
          return ids.size() < kIndexChunk;
        });
    if (!s.ok()) return;  // as in scan_stored
    for (const std::string& id : ids) {
      if (!store.get_view(prefix + id, &value).ok()) continue;
      auto v = nlohmann::json::parse(value, nullptr, false);
      if (!v.is_discarded() && !visit(id, std::move(v))) return;
    }
    if (ids.size() < kIndexChunk) return;
    after_key = index_prefix + ids.back();
  }
}

}  // namespace

Page list_entities(Engine& engine, const std::string& prefix, const std::string& after,
                   size_t limit,
                   const std::function<std::vector<nlohmann::json>(const State&)>& live_page,
                   const std::function<bool(const nlohmann::json&)>& keep,
                   const StoredMatches& stored) {
  std::vector<nlohmann::json> live;
  engine.read([&](const State& s, const Decision*) {
    live = live_page(s);
    return Reply{200, ""};
  });
  // Merge by id; a live entity wins over a stored view of the same id.
  std::map<std::string, nlohmann::json> merged;
  for (auto& v : live) merged.emplace(v.at("id").get<std::string>(), std::move(v));
  size_t kept = 0;
  auto visit = [&](std::string_view id, nlohmann::json v) {
    if (!keep(v)) return true;
    merged.emplace(std::string(id), std::move(v));
    return ++kept <= limit;
  };
  const EventStore& store = engine.store();
  switch (stored.mode) {
    case StoredMatches::Mode::kNone:
      break;
    case StoredMatches::Mode::kIndexed:
      if (view_index::ready(store)) {
        read_indexed(store, prefix, stored.index_prefix, after, visit);
        break;
      }
      [[fallthrough]];  // a store not indexed yet (read-only, written before the index)
    case StoredMatches::Mode::kScan:
      scan_stored(store, prefix, after, visit);
      break;
  }
  Page page;
  for (auto& [id, v] : merged) {
    if (page.items.size() == limit) {
      page.next = page.items.back().at("id").get<std::string>();
      break;
    }
    page.items.push_back(std::move(v));
  }
  return page;
}

Status fold_target_as_of(Engine& engine, const std::string& target, uint64_t as_of,
                         State& scratch) {
  std::vector<std::string> streams;
  engine.read([&](const State& s, const Decision*) {
    for (const auto& [id, j] : s.jobs.by_id) {
      if (j.target == target) streams.push_back(job_stream(id));
    }
    for (const auto& [id, h] : s.holds.by_id) {
      if (h.target == target) streams.push_back(hold_stream(id));
    }
    return Reply{200, ""};
  });
  const EventStore& store = engine.store();
  if (view_index::ready(store)) {
    for (const auto& by_target : {std::pair{view_index::Field::kJobTarget, StreamKind::kJob},
                                  std::pair{view_index::Field::kHoldTarget, StreamKind::kHold}}) {
      const std::string kind(stream_prefix(by_target.second));
      const std::string index_prefix = view_index::prefix(by_target.first, target);
      Status st = store.scan_views(index_prefix, "", [&](std::string_view key, std::string_view) {
        streams.push_back(kind + std::string(key.substr(index_prefix.size())));
        return true;
      });
      if (!st.ok()) return st;
    }
  } else {  // a store not indexed yet (read-only, written before the index)
    for (StreamKind kind : {StreamKind::kJob, StreamKind::kHold}) {
      const std::string prefix(stream_prefix(kind));
      scan_stored(store, prefix, "", [&](std::string_view id, const nlohmann::json& v) {
        if (v.value("target", "") == target) streams.push_back(stream_name(kind, id));
        return true;
      });
    }
  }
  for (const std::string& stream : streams) {
    if (Status st = hydrate(store, scratch, stream, as_of); !st.ok()) return st;
  }
  return Status::Ok();
}

}  // namespace runledger::http

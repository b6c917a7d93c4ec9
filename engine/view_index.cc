#include "engine/view_index.h"

#include <algorithm>
#include <charconv>
#include <functional>

#include <nlohmann/json.hpp>

#include "engine/entities.h"
#include "projections/hold.h"
#include "projections/job.h"
#include "projections/stream_name.h"

namespace runledger::view_index {

const std::array<const char*, kFinishedStates> kFinishedStateNames = {"SUCCEEDED", "FAILED",
                                                                      "CANCELLED"};

namespace {

// Keys read per step of build() and check(), so that their memory stays
// bounded whatever the number of finished entities.
constexpr size_t kChunk = 1'000;

constexpr std::string_view kCountPath = "index/count/job/";

std::string count_key(size_t slot) { return std::string(kCountPath) + kFinishedStateNames[slot]; }

// The slot of a job state entry among `entries`; nullopt when there is none.
// Runs for every job a batch finishes: the prefixes are made once.
std::optional<size_t> state_slot(const std::vector<std::string>& entries) {
  static const std::array<std::string, kFinishedStates> prefixes = [] {
    std::array<std::string, kFinishedStates> out;
    for (size_t slot = 0; slot < kFinishedStates; ++slot) {
      out[slot] = prefix(Field::kJobState, kFinishedStateNames[slot]);
    }
    return out;
  }();
  for (size_t slot = 0; slot < kFinishedStates; ++slot) {
    for (const auto& e : entries) {
      if (e.starts_with(prefixes[slot])) return slot;
    }
  }
  return std::nullopt;
}

std::string_view field_path(Field field) {
  switch (field) {
    case Field::kJobState:
      return "index/job/state/";
    case Field::kJobTarget:
      return "index/job/target/";
    case Field::kJobKind:
      return "index/job/kind/";
    case Field::kHoldTarget:
      return "index/hold/target/";
  }
  return "index/unknown/";
}

std::string key(Field field, std::string_view value, std::string_view id) {
  std::string k = prefix(field, value);
  k.append(id);
  return k;
}

// The entries of a finished job and of a released hold: what a stored view
// is filed under, whether it is read from memory or from the view itself.
void job_entries(std::string_view state, std::string_view target, std::string_view kind,
                 std::string_view id, std::vector<std::string>* out) {
  out->push_back(key(Field::kJobState, state, id));
  out->push_back(key(Field::kJobTarget, target, id));
  out->push_back(key(Field::kJobKind, kind, id));
}
void hold_entries(std::string_view target, std::string_view id, std::vector<std::string>* out) {
  out->push_back(key(Field::kHoldTarget, target, id));
}

// The index keys of a stored view; false when the view lacks a field.
bool keys_of_view(StreamKind kind, std::string_view id, const nlohmann::json& v,
                  std::vector<std::string>* out) {
  auto text = [&](const char* name) -> const std::string* {
    auto it = v.find(name);
    return it != v.end() && it->is_string() ? it->get_ptr<const std::string*>() : nullptr;
  };
  switch (kind) {
    case StreamKind::kJob: {
      const auto* state = text("state");
      const auto* target = text("target");
      const auto* job_kind = text("kind");
      if (!state || !target || !job_kind) return false;
      job_entries(*state, *target, *job_kind, id, out);
      return true;
    }
    case StreamKind::kHold: {
      const auto* target = text("target");
      if (!target) return false;
      hold_entries(*target, id, out);
      return true;
    }
    case StreamKind::kConnector:
      return false;  // a deleted connector keeps no view
  }
  return false;
}

using Chunk = std::vector<std::pair<std::string, std::string>>;

// Calls `each` with the views under `key_prefix` a chunk at a time, each
// chunk after its scan is closed, so that `each` may read or write the store.
Status for_each_chunk(const EventStore& store, std::string_view key_prefix,
                      const std::function<Status(const Chunk&)>& each) {
  std::string after;
  Chunk chunk;
  for (;;) {
    chunk.clear();
    Status s = store.scan_views(key_prefix, after, [&](std::string_view k, std::string_view v) {
      chunk.emplace_back(k, v);
      return chunk.size() < kChunk;
    });
    if (!s.ok()) return s;
    if (!chunk.empty()) {
      if (Status e = each(chunk); !e.ok()) return e;
    }
    if (chunk.size() < kChunk) return Status::Ok();
    after = chunk.back().first;
  }
}

// The index keys of the stored view `text` of `stream`; false when it is not
// a view that is indexed (not JSON, or a field missing).
bool keys_of_stored(std::string_view stream, std::string_view text,
                    std::vector<std::string>* keys) {
  keys->clear();
  auto name = parse_stream(stream);
  auto v = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return name && v.is_object() && keys_of_view(name->kind, name->id, v, keys);
}

// The stream an index entry names ("job/<id>", "hold/<id>"); false when the
// key is not an entry of the index.
bool stream_of_key(std::string_view key, std::string* stream) {
  for (Field f : {Field::kJobState, Field::kJobTarget, Field::kJobKind, Field::kHoldTarget}) {
    const std::string_view path = field_path(f);
    if (key.substr(0, path.size()) != path || key.size() < path.size() + 2) continue;
    const size_t n =
        (static_cast<uint8_t>(key[path.size()]) << 8) | static_cast<uint8_t>(key[path.size() + 1]);
    const size_t id_at = path.size() + 2 + n;
    if (id_at >= key.size()) return false;
    *stream = stream_name(f == Field::kHoldTarget ? StreamKind::kHold : StreamKind::kJob,
                          key.substr(id_at));
    return true;
  }
  return false;
}

}  // namespace

std::string prefix(Field field, std::string_view value) {
  std::string p(field_path(field));
  // The API bounds targets and kinds to 256 bytes. A value beyond 64 KiB (from
  // an imported log) would share its length bytes with a shorter one, so a
  // listing checks every view it reads through the index against its filter.
  const auto n = static_cast<uint16_t>(value.size());
  p.push_back(static_cast<char>(n >> 8));
  p.push_back(static_cast<char>(n & 0xff));
  p.append(value);
  return p;
}

std::vector<std::string> entries_of(const State& s, std::string_view stream) {
  std::vector<std::string> keys;
  auto name = parse_stream(stream);
  if (!name || !entity_status(s, stream).finished_in_memory()) return keys;
  switch (name->kind) {
    case StreamKind::kJob: {
      const jobs::Job& j = s.jobs.by_id.find(name->id)->second;
      job_entries(jobs::to_string(j.latest().state), j.target, j.kind, j.id, &keys);
      break;
    }
    case StreamKind::kHold: {
      const holds::Hold& h = s.holds.by_id.find(name->id)->second;
      hold_entries(h.target, h.id, &keys);
      break;
    }
    case StreamKind::kConnector:
      break;  // a deleted connector keeps no view
  }
  return keys;
}

void add_view_writes(const State& s, std::string_view stream,
                     const std::vector<std::string>* stored, ViewWrites* out,
                     FinishedCounts* counts) {
  auto view = finished_view(s, stream);
  if (!view && stored == nullptr) return;
  std::vector<std::string> now = entries_of(s, stream);
  if (stored != nullptr) {
    if (auto was = state_slot(*stored)) --(*counts)[*was];
  }
  if (view) {
    if (auto is = state_slot(now)) ++(*counts)[*is];
  }
  if (stored != nullptr) {
    for (const std::string& k : *stored) {
      if (std::find(now.begin(), now.end(), k) == now.end()) out->emplace_back(k, std::nullopt);
    }
  }
  if (!view) {
    out->emplace_back(stream, std::nullopt);
    return;
  }
  out->emplace_back(stream, std::move(*view));
  for (auto& k : now) out->emplace_back(std::move(k), std::string());
}

void add_count_writes(const FinishedCounts& counts, const FinishedCounts* before, ViewWrites* out) {
  for (size_t slot = 0; slot < kFinishedStates; ++slot) {
    if (before != nullptr && (*before)[slot] == counts[slot]) continue;
    out->emplace_back(count_key(slot), std::to_string(counts[slot]));
  }
}

Status read_counts(const EventStore& store, FinishedCounts* counts) {
  counts->fill(0);
  std::string value;
  for (size_t slot = 0; slot < kFinishedStates; ++slot) {
    Status s = store.get_view(count_key(slot), &value);
    if (s.code() == Status::Code::kNotFound) continue;
    if (!s.ok()) return s;
    int64_t n = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || end != value.data() + value.size()) {
      return Status::Corruption("the count of stored " + std::string(kFinishedStateNames[slot]) +
                                " jobs is not a number: '" + value + "'");
    }
    (*counts)[slot] = n;
  }
  return Status::Ok();
}

bool ready(const EventStore& store) {
  std::string value;
  return store.get_view(kReadyKey, &value).ok();
}

Status build(EventStore& store, size_t* indexed) {
  *indexed = 0;
  if (ready(store)) return Status::Ok();
  std::vector<std::string> keys;
  FinishedCounts counts{};
  auto index_chunk = [&](const Chunk& chunk) {
    AppendBatch batch;
    for (const auto& [stream, text] : chunk) {
      if (!keys_of_stored(stream, text, &keys)) continue;
      if (auto slot = state_slot(keys)) ++counts[*slot];
      for (auto& k : keys) batch.views.emplace_back(std::move(k), std::string());
      ++*indexed;
    }
    return batch.empty() ? Status::Ok() : store.append(batch);
  };
  for (StreamKind kind : {StreamKind::kJob, StreamKind::kHold}) {
    if (Status s = for_each_chunk(store, stream_prefix(kind), index_chunk); !s.ok()) return s;
  }
  AppendBatch mark;
  add_count_writes(counts, nullptr, &mark.views);
  mark.views.emplace_back(std::string(kReadyKey), std::string("1"));
  return store.append(mark);
}

Status check(const EventStore& store, std::vector<std::string>* problems) {
  if (!ready(store)) return Status::Ok();
  std::string value;
  std::vector<std::string> keys;
  // Every stored view has each of its entries...
  auto entries_of_views = [&](const Chunk& chunk) {
    for (const auto& [stream, text] : chunk) {
      if (!keys_of_stored(stream, text, &keys)) continue;
      for (const auto& k : keys) {
        Status s = store.get_view(k, &value);
        if (s.code() == Status::Code::kNotFound) {
          problems->push_back(stream + ": the index of stored views lacks an entry");
        } else if (!s.ok()) {
          return s;
        }
      }
    }
    return Status::Ok();
  };
  for (StreamKind kind : {StreamKind::kJob, StreamKind::kHold}) {
    if (Status s = for_each_chunk(store, stream_prefix(kind), entries_of_views); !s.ok()) return s;
  }
  // ...and every entry is one of a stored view's.
  std::string stream;
  FinishedCounts entries_by_state{};
  auto views_of_entries = [&](const Chunk& chunk) {
    for (const auto& [key, unused] : chunk) {
      if (key == kReadyKey || key.starts_with(kCountPath)) continue;
      if (auto slot = state_slot({key})) ++entries_by_state[*slot];
      if (!stream_of_key(key, &stream)) {
        problems->push_back("the index of stored views holds a key of no known form");
        continue;
      }
      Status s = store.get_view(stream, &value);
      if (s.code() == Status::Code::kNotFound) {
        problems->push_back(stream + ": indexed, but no view of it is stored");
        continue;
      }
      if (!s.ok()) return s;
      if (!keys_of_stored(stream, value, &keys) ||
          std::find(keys.begin(), keys.end(), key) == keys.end()) {
        problems->push_back(stream +
                            ": an entry of the index of stored views disagrees with its view");
      }
    }
    return Status::Ok();
  };
  if (Status s = for_each_chunk(store, kKeyPrefix, views_of_entries); !s.ok()) return s;
  FinishedCounts counts{};
  if (Status s = read_counts(store, &counts); !s.ok()) return s;
  for (size_t slot = 0; slot < kFinishedStates; ++slot) {
    if (counts[slot] != entries_by_state[slot]) {
      problems->push_back("the index of stored views counts " + std::to_string(counts[slot]) + " " +
                          kFinishedStateNames[slot] + " jobs, and holds " +
                          std::to_string(entries_by_state[slot]));
    }
  }
  return Status::Ok();
}

}  // namespace runledger::view_index

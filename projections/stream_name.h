// The names of the log's streams, one per entity: "job/<id>",
// "connector/<id>", "hold/<id>" (docs/architecture.md "The store"). The
// grammar is written here once: the deciders name the streams they append
// to with it, the folds, the transition checker and the view index parse
// them with it, and the HTTP filters and the CLI take names in it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "events/keys.h"
#include "projections/limits.h"

namespace runledger {

enum class StreamKind : uint8_t { kJob, kConnector, kHold };

inline constexpr StreamKind kStreamKinds[] = {StreamKind::kJob, StreamKind::kConnector,
                                              StreamKind::kHold};

// "job/", "connector/", "hold/": what every stream of the kind starts with.
constexpr std::string_view stream_prefix(StreamKind kind) {
  switch (kind) {
    case StreamKind::kJob:
      return "job/";
    case StreamKind::kConnector:
      return "connector/";
    case StreamKind::kHold:
      return "hold/";
  }
  return "";
}

inline std::string stream_name(StreamKind kind, std::string_view id) {
  std::string name(stream_prefix(kind));
  name += id;
  return name;
}
inline std::string job_stream(std::string_view id) { return stream_name(StreamKind::kJob, id); }
inline std::string connector_stream(std::string_view id) {
  return stream_name(StreamKind::kConnector, id);
}
inline std::string hold_stream(std::string_view id) { return stream_name(StreamKind::kHold, id); }

// Every entity's stream name fits the store's stream index.
constexpr size_t longest_stream_prefix() {
  size_t n = 0;
  for (StreamKind kind : kStreamKinds) n = std::max(n, stream_prefix(kind).size());
  return n;
}
static_assert(longest_stream_prefix() + limits::kIdBytesMax <= keys::kStreamBytesMax,
              "the longest stream name must fit the stream index key");

// The kind of the stream `name`, nullopt when it is of none.
inline std::optional<StreamKind> stream_kind(std::string_view name) {
  for (StreamKind kind : kStreamKinds) {
    if (name.substr(0, stream_prefix(kind).size()) == stream_prefix(kind)) return kind;
  }
  return std::nullopt;
}

// The id in `name` when it is a stream of `kind`, else empty.
inline std::string_view stream_id(std::string_view name, StreamKind kind) {
  const std::string_view prefix = stream_prefix(kind);
  if (name.substr(0, prefix.size()) != prefix) return {};
  return name.substr(prefix.size());
}

// A stream's name taken apart: its kind and the id after the kind's prefix.
struct StreamName {
  StreamKind kind;
  std::string_view id;
};

// `name` taken apart; nullopt when it is no entity's stream.
inline std::optional<StreamName> parse_stream(std::string_view name) {
  const std::optional<StreamKind> kind = stream_kind(name);
  if (!kind) return std::nullopt;
  const std::string_view id = stream_id(name, *kind);
  if (id.empty()) return std::nullopt;
  return StreamName{*kind, id};
}

// Whether `name` is an entity's stream: a kind's prefix and an id after it.
inline bool names_an_entity(std::string_view name) {
  const std::optional<StreamKind> kind = stream_kind(name);
  return kind && !stream_id(name, *kind).empty();
}

}  // namespace runledger

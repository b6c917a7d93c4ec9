// Names of the connector enums as the log and the JSON spell them, and the
// code-point cut applied to error texts.
#include <array>
#include <string_view>

#include "projections/connector.h"
#include "projections/connector_internal.h"
#include "projections/stream_name.h"

namespace runledger::connectors {

const char* to_string(Status s) {
  switch (s) {
    case Status::kActive:
      return "active";
    case Status::kPaused:
      return "paused";
    case Status::kError:
      return "error";
    case Status::kDeleting:
      return "deleting";
  }
  return "unknown";
}

const char* to_string(SyncStatus s) {
  switch (s) {
    case SyncStatus::kIdle:
      return "idle";
    case SyncStatus::kRunning:
      return "running";
  }
  return "unknown";
}

const char* to_string(DocStatus s) {
  switch (s) {
    case DocStatus::kPending:
      return "pending";
    case DocStatus::kRunning:
      return "running";
    case DocStatus::kIndexed:
      return "indexed";
    case DocStatus::kFailed:
      return "failed";
  }
  return "unknown";
}

namespace {

// Walks every value of an enum whose to_string() is total over `values`.
template <typename E, size_t N>
std::optional<E> parse(std::string_view s, const std::array<E, N>& values) {
  for (E v : values) {
    if (s == to_string(v)) return v;
  }
  return std::nullopt;
}

bool is_continuation_byte(unsigned char b) { return (b & 0xC0) == 0x80; }

}  // namespace

std::optional<Status> status_from(std::string_view s) {
  return parse(s, std::array{Status::kActive, Status::kPaused, Status::kError, Status::kDeleting});
}

std::optional<SyncStatus> sync_status_from(std::string_view s) {
  return parse(s, std::array{SyncStatus::kIdle, SyncStatus::kRunning});
}

std::optional<DocStatus> doc_status_from(std::string_view s) {
  return parse(s, std::array{DocStatus::kPending, DocStatus::kRunning, DocStatus::kIndexed,
                             DocStatus::kFailed});
}

// A code point starts at every byte that is not a UTF-8 continuation byte, so
// the cut lands on the first byte of code point `max` (counted from 0) and
// never splits a character. Stops there: a 1 MB text costs what it keeps.
std::string cut_code_points(std::string_view text, size_t max) {
  size_t seen = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (is_continuation_byte(static_cast<unsigned char>(text[i]))) continue;
    if (seen == max) return std::string(text.substr(0, i));
    ++seen;
  }
  return std::string(text);
}

namespace internal {

std::string_view id_of_stream(std::string_view stream) {
  return stream_id(stream, StreamKind::kConnector);
}

}  // namespace internal

}  // namespace runledger::connectors

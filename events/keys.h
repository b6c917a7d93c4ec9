// The key grammar of the RocksDB store: which column family holds what, and
// the exact bytes of every key. Integers in keys are fixed-width big-endian so
// that RocksDB's bytewise order is numeric order.
//
//   column family  key                                       value
//   -------------  ----------------------------------------  ------------------------------
//   log            seq (8 bytes BE)                          event bytes (encode_event)
//   stream_index   stream bytes, 0x00, version (4 bytes BE)  seq (8 bytes BE)
//   idempotency    idempotency key (opaque bytes)            recorded_at ms (8 bytes BE),
//                                                            then the first reply (opaque)
//   views          view key (opaque bytes)                   view value (opaque); the engine
//                  keeps its index of the views here too (engine/view_index.h)
//   snapshot       "snapshot" (the only key)                 projection snapshot (opaque)
//   default        "format"                                  kLogFormat
//
// A stream name never contains 0x00: the separator keeps "job/a" from
// matching "job/ab" in a prefix scan. The log and the stream index of one
// event are always written in the same WriteBatch.
// Thread-safe: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace runledger::keys {

inline constexpr char kLogFamily[] = "log";
inline constexpr char kStreamIndexFamily[] = "stream_index";
inline constexpr char kIdempotencyFamily[] = "idempotency";
inline constexpr char kViewsFamily[] = "views";
inline constexpr char kSnapshotFamily[] = "snapshot";
inline constexpr char kDefaultFamily[] = "default";

inline constexpr std::string_view kSnapshotKey = "snapshot";
inline constexpr std::string_view kFormatKey = "format";
// Bumped only if the key grammar or the event envelope changes incompatibly.
inline constexpr std::string_view kLogFormat = "runledger-log-1";

inline constexpr size_t kSeqBytes = 8;
inline constexpr size_t kVersionBytes = 4;
inline constexpr char kStreamSeparator = '\0';
// Longest stream name the index accepts; names are "job/<id>" and the like.
inline constexpr size_t kStreamBytesMax = 1024;
// Room for the longest stream index key, so callers can size a stack buffer.
inline constexpr size_t kStreamIndexKeyBytesMax = kStreamBytesMax + 1 + kVersionBytes;
inline constexpr size_t kRecordedAtBytes = 8;

inline void put_be64(uint64_t v, char* out) {
  for (size_t i = 0; i < 8; ++i) out[i] = static_cast<char>(v >> (56 - 8 * i));
}
inline uint64_t get_be64(const char* in) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(in[i]);
  return v;
}
inline void put_be32(uint32_t v, char* out) {
  for (size_t i = 0; i < 4; ++i) out[i] = static_cast<char>(v >> (24 - 8 * i));
}
inline uint32_t get_be32(const char* in) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<uint8_t>(in[i]);
  return v;
}

// A log key: fills `out` (kSeqBytes) and returns a view of it.
inline std::string_view log_key(uint64_t seq, char (&out)[kSeqBytes]) {
  put_be64(seq, out);
  return std::string_view(out, kSeqBytes);
}
// false when `key` is not a well-formed log key.
bool parse_log_key(std::string_view key, uint64_t* seq);

// True when `stream` can be a key prefix: not empty, no 0x00, not too long.
bool valid_stream_name(std::string_view stream);

// Stream index key of (stream, version) into `out` (replaced).
void stream_index_key(std::string_view stream, uint32_t version, std::string* out);
// The bounds of one stream's index entries: [stream 0x00, stream 0x01).
void stream_index_bounds(std::string_view stream, std::string* lower, std::string* upper);
// Splits a stream index key; false when malformed.
bool parse_stream_index_key(std::string_view key, std::string_view* stream, uint32_t* version);

// The recorded_at of an idempotency value; false when the value is too short.
bool idempotency_recorded_at_ms(std::string_view value, int64_t* recorded_at_ms);

}  // namespace runledger::keys

// The key grammar of the RocksDB store: which column family holds what, and
// the exact bytes of every key. Integers in keys are fixed-width big-endian so
// that RocksDB's bytewise order is numeric order.
//
//   column family  key                                       value
//   -------------  ----------------------------------------  ------------------------------
//   log            seq (8 bytes BE)                          event bytes (encode_event)
//   stream_index   stream bytes, 0x00, version (4 bytes BE)  the seqs (8 bytes BE each) of
//                                                            that version and the ones
//                                                            after it, one per version
//   idempotency    idempotency key (opaque bytes)            recorded_at ms (8 bytes BE),
//                                                            then the first reply (opaque)
//   views          view key (opaque bytes)                   view value (opaque); the engine
//                  keeps its index of the views here too (engine/view_index.h)
//   snapshot       "snapshot" (the only key)                 projection snapshot (opaque)
//   default        "format"                                  kStoreFormat
//   default        "index_covers"                            seq (8 bytes BE)
//
// A stream name never contains 0x00: the separator keeps "job/a" from
// matching "job/ab" in a prefix scan.
//
// The stream index is written in runs, not an entry per event: one entry
// per stream holds the seqs of the versions appended to it since the last
// index checkpoint. A checkpoint goes into the WriteBatch of an append, with
// "index_covers" set to the last seq before that append's events: every
// event up to it is in the family, and the events after it are indexed in
// memory from the log when the store opens (see open_stream_index.h). A
// stream's runs follow each other without gap or overlap, so reading them
// in key order gives its versions in order.
//
// Store formats: kStoreFormat; kFirstStoreFormat wrote one entry per event
// (a run of one version) in the same batch as the event and had no
// "index_covers", which reads as "covers the whole log". A writable open
// upgrades it by writing both keys; nothing else changes.
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
inline constexpr std::string_view kIndexCoversKey = "index_covers";
// The format of the events and their hash chain, which exports carry.
// Bumped only if the event envelope changes incompatibly.
inline constexpr std::string_view kLogFormat = "runledger-log-1";
// What the "format" key holds: the key grammar above. Bumped whenever a
// build of an older grammar would misread the store.
inline constexpr std::string_view kStoreFormat = "runledger-store-2";
// The store format before runs of the stream index (see above), which
// held the log format's name.
inline constexpr std::string_view kFirstStoreFormat = "runledger-log-1";

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
// Appends the value of a run (the seqs of consecutive versions) to `out`.
void append_stream_index_run(const uint64_t* seqs, size_t count, std::string* out);
// How many versions a run's value holds; false when it is empty or not a
// whole number of seqs.
bool parse_stream_index_run(std::string_view value, size_t* versions);
// The i-th seq of a run that parse_stream_index_run accepted.
inline uint64_t stream_index_run_seq(std::string_view value, size_t i) {
  return get_be64(value.data() + i * kSeqBytes);
}

// The recorded_at of an idempotency value; false when the value is too short.
bool idempotency_recorded_at_ms(std::string_view value, int64_t* recorded_at_ms);

}  // namespace runledger::keys

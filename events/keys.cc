// Encoding and parsing of the store's keys; the grammar is in keys.h.
#include "events/keys.h"

namespace runledger::keys {

bool parse_log_key(std::string_view key, uint64_t* seq) {
  if (key.size() != kSeqBytes) return false;
  *seq = get_be64(key.data());
  return true;
}

bool valid_stream_name(std::string_view stream) {
  return !stream.empty() && stream.size() <= kStreamBytesMax &&
         stream.find(kStreamSeparator) == std::string_view::npos;
}

void stream_index_key(std::string_view stream, uint32_t version, std::string* out) {
  out->resize(stream.size() + 1 + kVersionBytes);
  char* p = out->data();
  stream.copy(p, stream.size());
  p[stream.size()] = kStreamSeparator;
  put_be32(version, p + stream.size() + 1);
}

void stream_index_bounds(std::string_view stream, std::string* lower, std::string* upper) {
  lower->assign(stream);
  lower->push_back(kStreamSeparator);
  upper->assign(stream);
  upper->push_back(static_cast<char>(kStreamSeparator + 1));
}

bool parse_stream_index_key(std::string_view key, std::string_view* stream, uint32_t* version) {
  if (key.size() < 1 + 1 + kVersionBytes) return false;
  size_t sep = key.size() - kVersionBytes - 1;
  if (key[sep] != kStreamSeparator) return false;
  *stream = key.substr(0, sep);
  *version = get_be32(key.data() + sep + 1);
  return true;
}

void append_stream_index_run(const uint64_t* seqs, size_t count, std::string* out) {
  const size_t at = out->size();
  out->resize(at + count * kSeqBytes);
  for (size_t i = 0; i < count; ++i) put_be64(seqs[i], out->data() + at + i * kSeqBytes);
}

bool parse_stream_index_run(std::string_view value, size_t* versions) {
  if (value.empty() || value.size() % kSeqBytes != 0) return false;
  *versions = value.size() / kSeqBytes;
  return true;
}

bool idempotency_recorded_at_ms(std::string_view value, int64_t* recorded_at_ms) {
  if (value.size() < kRecordedAtBytes) return false;
  *recorded_at_ms = static_cast<int64_t>(get_be64(value.data()));
  return true;
}

}  // namespace runledger::keys

#include "engine/idempotency.h"

#include <cstring>

namespace runledger {

Hash request_fingerprint(std::string_view method, std::string_view path, std::string_view body) {
  std::string text;
  text.reserve(method.size() + path.size() + body.size() + 2);
  text.append(method).append(" ").append(path).append("\n").append(body);
  return sha256(text);
}

std::string encode_idempotency(int64_t recorded_at_ms, const Hash& fingerprint, const Reply& r) {
  std::string v;
  v.reserve(42 + r.body.size());
  auto ms = static_cast<uint64_t>(recorded_at_ms);
  for (int i = 7; i >= 0; --i) v.push_back(static_cast<char>((ms >> (8 * i)) & 0xff));
  auto status = static_cast<uint16_t>(r.status);
  v.push_back(static_cast<char>(status >> 8));
  v.push_back(static_cast<char>(status & 0xff));
  v.append(reinterpret_cast<const char*>(fingerprint.data()), fingerprint.size());
  v.append(r.body);
  return v;
}

std::optional<IdempotencyRecord> decode_idempotency(std::string_view v) {
  if (v.size() < 42) return std::nullopt;
  IdempotencyRecord rec;
  uint64_t ms = 0;
  for (int i = 0; i < 8; ++i) ms = ms << 8 | static_cast<uint8_t>(v[i]);
  rec.recorded_at_ms = static_cast<int64_t>(ms);
  rec.reply.status = static_cast<uint8_t>(v[8]) << 8 | static_cast<uint8_t>(v[9]);
  std::memcpy(rec.fingerprint.data(), v.data() + 10, 32);
  rec.reply.body.assign(v.substr(42));
  return rec;
}

}  // namespace runledger

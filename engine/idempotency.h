// Idempotency records: key -> the first reply to the request that used it.
//
// Value layout (stored in the `idempotency` column family):
//   recorded_at_ms  8 bytes big-endian (the store purges by it)
//   status          2 bytes big-endian
//   fingerprint    32 bytes SHA-256 of "METHOD PATH\n" + body
//   body            the rest: the reply body
// A later request with the same key and fingerprint gets the stored reply;
// the same key with another fingerprint is a conflict.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "engine/reply.h"
#include "events/hash.h"

namespace runledger {

inline constexpr size_t kIdempotencyKeyBytesMax = 128;
inline constexpr int64_t kIdempotencyKeepMs = 24LL * 3600 * 1000;

Hash request_fingerprint(std::string_view method, std::string_view path, std::string_view body);

std::string encode_idempotency(int64_t recorded_at_ms, const Hash& fingerprint, const Reply& r);

struct IdempotencyRecord {
  int64_t recorded_at_ms = 0;
  Hash fingerprint{};
  Reply reply;
};
std::optional<IdempotencyRecord> decode_idempotency(std::string_view value);

}  // namespace runledger

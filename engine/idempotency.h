// Idempotency records: key -> the first reply to the request that used it
// (docs/api.md "Idempotency", docs/operations.md "What the data folder holds").
//
// A record belongs to its caller and never holds a secret in clear:
//   - it is stored under a digest of the key (idempotency_record_key), never
//     the key itself;
//   - its fingerprint covers the caller (the token's name, "anonymous"
//     without authentication), method, path and body, so the same key from
//     another caller is a conflict, not a replay;
//   - a secret the reply carries (the lease token of a claim or reattach)
//     is cut out of the kept body and kept sealed under the key: XORed with
//     a pad of SHA-256(domain, nonce, block, key). Only a caller who sends
//     the key again can open it, and the data folder holds no copy of the
//     key to open it with.
//
// Value layout (the `idempotency` column family):
//   recorded_at_ms  8 bytes big-endian (the store purges by it)
//   status          2 bytes big-endian
//   fingerprint    32 bytes
//   format          1 byte, kRecordFormatSealed
//   secret_at       4 bytes big-endian: where the secret sat in the body
//   secret_bytes    1 byte: 0 when the reply carried none
//   nonce          16 bytes, then the sealed secret: only when secret_bytes > 0
//   body            the rest: the reply body without the secret
// Records of earlier versions (kept under the key itself, with a
// fingerprint of method, path and body alone and the body in clear right
// after it) are still read until they age out; see legacy_request_fingerprint.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/sha256.h"
#include "engine/reply.h"

namespace runledger {

inline constexpr size_t kIdempotencyKeyBytesMax = 128;
inline constexpr int64_t kIdempotencyKeepMs = 24LL * 3600 * 1000;
// The longest secret a kept reply may carry sealed (a lease token is 32).
inline constexpr size_t kSealedSecretBytesMax = 255;

// Where the record of `key` is stored: a byte no key holds (keys are
// printable), then a digest of the key.
std::string idempotency_record_key(std::string_view key);

Hash request_fingerprint(std::string_view caller, std::string_view method, std::string_view path,
                         std::string_view body);
// The fingerprint records of earlier versions hold: no caller in it.
Hash legacy_request_fingerprint(std::string_view method, std::string_view path,
                                std::string_view body);

// The record of reply `r` to the request with `key`. `secret`, when not
// empty and found in the body, is kept sealed under `key` (at most
// kSealedSecretBytesMax bytes).
std::string encode_idempotency(int64_t recorded_at_ms, const Hash& fingerprint, const Reply& r,
                               std::string_view secret, std::string_view key);

struct IdempotencyRecord {
  int64_t recorded_at_ms = 0;
  Hash fingerprint{};
  Reply reply;
};
// A record read back; its secret, if any, opened with `key` (the key the
// request that found it sent). nullopt when the value is not a record.
std::optional<IdempotencyRecord> decode_idempotency(std::string_view value, std::string_view key);

}  // namespace runledger

#include "engine/idempotency.h"

#include <cstring>
#include <stdexcept>

#include "base/random_bytes.h"

namespace runledger {
namespace {

constexpr size_t kHeadBytes = 8 + 2 + 32;   // recorded_at, status, fingerprint
constexpr char kRecordFormatSealed = 0x02;  // never the first byte of a JSON body
constexpr size_t kNonceBytes = 16;
constexpr std::string_view kKeyDomain = "runledger idempotency key\n";
constexpr std::string_view kSealDomain = "runledger idempotency seal\n";

void put_be(uint64_t v, int bytes, std::string* out) {
  for (int i = bytes - 1; i >= 0; --i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t get_be(std::string_view v, size_t at, int bytes) {
  uint64_t n = 0;
  for (int i = 0; i < bytes; ++i) n = n << 8 | static_cast<uint8_t>(v[at + static_cast<size_t>(i)]);
  return n;
}

// XORs `text` with the pad of (nonce, key): SHA-256 blocks of the domain,
// the nonce, the block's number and the key. A fresh nonce per record, so
// no two records share a pad even when a key comes back after its purge.
void seal(std::string_view nonce, std::string_view key, std::string* text) {
  std::string input;
  input.reserve(kSealDomain.size() + nonce.size() + 1 + key.size());
  for (size_t block = 0; block * 32 < text->size(); ++block) {
    input.assign(kSealDomain).append(nonce).push_back(static_cast<char>(block));
    input.append(key);
    const Hash pad = sha256(input);
    for (size_t i = 0; i < 32 && block * 32 + i < text->size(); ++i) {
      (*text)[block * 32 + i] = static_cast<char>((*text)[block * 32 + i] ^ pad[i]);
    }
  }
}

}  // namespace

std::string idempotency_record_key(std::string_view key) {
  std::string input;
  input.reserve(kKeyDomain.size() + key.size());
  input.append(kKeyDomain).append(key);
  const Hash digest = sha256(input);
  std::string stored(1, '\0');
  stored.append(reinterpret_cast<const char*>(digest.data()), digest.size());
  return stored;
}

Hash request_fingerprint(std::string_view caller, std::string_view method, std::string_view path,
                         std::string_view body) {
  std::string text;
  text.reserve(caller.size() + method.size() + path.size() + body.size() + 3);
  // A caller's name holds no newline, so caller and request cannot run together.
  text.append(caller).append("\n").append(method).append(" ").append(path).append("\n");
  text.append(body);
  return sha256(text);
}

Hash legacy_request_fingerprint(std::string_view method, std::string_view path,
                                std::string_view body) {
  std::string text;
  text.reserve(method.size() + path.size() + body.size() + 2);
  text.append(method).append(" ").append(path).append("\n").append(body);
  return sha256(text);
}

std::string encode_idempotency(int64_t recorded_at_ms, const Hash& fingerprint, const Reply& r,
                               std::string_view secret, std::string_view key) {
  size_t secret_at = std::string::npos;
  if (!secret.empty() && secret.size() <= kSealedSecretBytesMax) secret_at = r.body.find(secret);
  std::string v;
  v.reserve(kHeadBytes + 1 + 5 + kNonceBytes + r.body.size());
  put_be(static_cast<uint64_t>(recorded_at_ms), 8, &v);
  put_be(static_cast<uint16_t>(r.status), 2, &v);
  v.append(reinterpret_cast<const char*>(fingerprint.data()), fingerprint.size());
  v.push_back(kRecordFormatSealed);
  if (secret_at == std::string::npos) {
    put_be(0, 4, &v);
    v.push_back(0);
    v.append(r.body);
    return v;
  }
  put_be(secret_at, 4, &v);
  v.push_back(static_cast<char>(secret.size()));
  unsigned char nonce[kNonceBytes];
  random_bytes(nonce);
  const std::string_view nonce_text(reinterpret_cast<const char*>(nonce), sizeof nonce);
  v.append(nonce_text);
  std::string sealed(secret);
  seal(nonce_text, key, &sealed);
  v.append(sealed);
  v.append(r.body, 0, secret_at);
  v.append(r.body, secret_at + secret.size());
  return v;
}

std::optional<IdempotencyRecord> decode_idempotency(std::string_view v, std::string_view key) {
  if (v.size() < kHeadBytes) return std::nullopt;
  IdempotencyRecord rec;
  rec.recorded_at_ms = static_cast<int64_t>(get_be(v, 0, 8));
  rec.reply.status = static_cast<int>(get_be(v, 8, 2));
  std::memcpy(rec.fingerprint.data(), v.data() + 10, 32);
  if (v.size() == kHeadBytes || v[kHeadBytes] != kRecordFormatSealed) {
    rec.reply.body.assign(v.substr(kHeadBytes));  // an earlier version's record
    return rec;
  }
  size_t at = kHeadBytes + 1;
  if (v.size() < at + 5) return std::nullopt;
  const size_t secret_at = get_be(v, at, 4);
  const size_t secret_bytes = static_cast<uint8_t>(v[at + 4]);
  at += 5;
  if (secret_bytes == 0) {
    rec.reply.body.assign(v.substr(at));
    return rec;
  }
  if (v.size() < at + kNonceBytes + secret_bytes) return std::nullopt;
  const std::string_view nonce = v.substr(at, kNonceBytes);
  std::string secret(v.substr(at + kNonceBytes, secret_bytes));
  seal(nonce, key, &secret);
  const std::string_view body = v.substr(at + kNonceBytes + secret_bytes);
  if (secret_at > body.size()) return std::nullopt;
  rec.reply.body.reserve(body.size() + secret.size());
  rec.reply.body.append(body.substr(0, secret_at)).append(secret).append(body.substr(secret_at));
  return rec;
}

}  // namespace runledger

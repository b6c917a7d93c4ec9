#include "base/sha256.h"

#include <openssl/evp.h>
#include <openssl/sha.h>

#include <memory>

namespace runledger {
namespace {

// OpenSSL 3's one-shot SHA256() looks the algorithm up on every call; the
// sequencer hashes every event, so the algorithm is fetched once and each
// thread keeps one context: about twice as fast for event-sized inputs.
struct ContextFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

const EVP_MD* sha256_algorithm() {
  static const EVP_MD* md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  return md;
}

EVP_MD_CTX* thread_context() {
  thread_local std::unique_ptr<EVP_MD_CTX, ContextFree> ctx(EVP_MD_CTX_new());
  return ctx.get();
}

}  // namespace

Hash sha256(std::string_view bytes) {
  Hash h;
  EVP_MD_CTX* ctx = thread_context();
  const EVP_MD* md = sha256_algorithm();
  unsigned int n = 0;
  if (ctx == nullptr || md == nullptr || EVP_DigestInit_ex(ctx, md, nullptr) != 1 ||
      EVP_DigestUpdate(ctx, bytes.data(), bytes.size()) != 1 ||
      EVP_DigestFinal_ex(ctx, h.data(), &n) != 1 || n != h.size()) {
    // Out of memory inside OpenSSL: the one-shot call still gives the right digest.
    SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), h.data());
  }
  return h;
}

namespace {
constexpr char kHexDigits[] = "0123456789abcdef";
}  // namespace

void append_hex(const uint8_t* data, size_t n, std::string* out) {
  const size_t at = out->size();
  out->resize(at + n * 2);
  char* p = out->data() + at;
  for (size_t i = 0; i < n; ++i) {
    p[2 * i] = kHexDigits[data[i] >> 4];
    p[2 * i + 1] = kHexDigits[data[i] & 0xf];
  }
}

std::string to_hex(const uint8_t* data, size_t n) {
  std::string out;
  append_hex(data, n, &out);
  return out;
}

bool equals_hex(const Hash& h, std::string_view hex) {
  if (hex.size() != h.size() * 2) return false;
  for (size_t i = 0; i < h.size(); ++i) {
    if (hex[2 * i] != kHexDigits[h[i] >> 4] || hex[2 * i + 1] != kHexDigits[h[i] & 0xf]) {
      return false;
    }
  }
  return true;
}

}  // namespace runledger

#include "events/hash.h"

#include <openssl/sha.h>

namespace runledger {

Hash sha256(std::string_view bytes) {
  Hash h;
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), h.data());
  return h;
}

std::string to_hex(const uint8_t* data, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(n * 2, '0');
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = kDigits[data[i] >> 4];
    out[2 * i + 1] = kDigits[data[i] & 0xf];
  }
  return out;
}

}  // namespace runledger

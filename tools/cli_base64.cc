// Base64 on OpenSSL's block codec: see cli_base64.h.
#include "tools/cli_base64.h"

#include <openssl/evp.h>

namespace runledger::cli {

namespace {
constexpr size_t kGroupChars = 4;  // base64 turns 3 bytes into 4 characters
constexpr size_t kGroupBytes = 3;
}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out((bytes.size() + kGroupBytes - 1) / kGroupBytes * kGroupChars + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(bytes.data()),
                          static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

bool base64_decode(std::string_view text, std::string* bytes) {
  if (text.size() % kGroupChars != 0) return false;
  std::string out(text.size() / kGroupChars * kGroupBytes, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(text.data()),
                          static_cast<int>(text.size()));
  if (n < 0) return false;
  // EVP_DecodeBlock counts the padding as zero bytes: take them off.
  size_t padding = 0;
  for (size_t i = text.size(); i > 0 && text[i - 1] == '=' && padding < 2; --i) ++padding;
  out.resize(static_cast<size_t>(n) - padding);
  *bytes = std::move(out);
  return true;
}

}  // namespace runledger::cli

// Base64 (RFC 4648, with padding, no line breaks) for the exact event bytes
// that `runledger export` writes and `import` reads back.
#pragma once

#include <string>
#include <string_view>

namespace runledger::cli {

std::string base64_encode(std::string_view bytes);
// false when `text` is not well-formed base64.
bool base64_decode(std::string_view text, std::string* bytes);

}  // namespace runledger::cli

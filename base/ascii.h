// ASCII case-insensitive comparison, as HTTP header names, tokens and
// schemes compare. Thread-safe: pure functions.
#pragma once

#include <string_view>

namespace runledger {

// The ASCII lower case of `c`; other bytes as they are.
constexpr char ascii_lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool iequals(std::string_view a, std::string_view b);

}  // namespace runledger

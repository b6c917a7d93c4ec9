// SHA-256 for the event hash chain and for lease tokens (which the log only
// ever holds hashed). Thread-safe: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace runledger {

using Hash = std::array<uint8_t, 32>;

Hash sha256(std::string_view bytes);
std::string to_hex(const uint8_t* data, size_t n);
// Appends the hex of `data` to `out`, as to_hex() writes it.
void append_hex(const uint8_t* data, size_t n, std::string* out);
inline std::string to_hex(const Hash& h) { return to_hex(h.data(), h.size()); }
// Hex SHA-256 of a string: how lease tokens are stored.
inline std::string sha256_hex(std::string_view s) { return to_hex(sha256(s)); }
// Whether `hex` is to_hex(h), without building it: every worker command
// checks its lease token this way.
bool equals_hex(const Hash& h, std::string_view hex);

}  // namespace runledger

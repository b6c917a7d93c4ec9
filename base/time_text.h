// Times as the API, the log's JSON and the CLI write them: RFC 3339 UTC
// with milliseconds. Thread-safe: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace runledger {

// Milliseconds since the epoch as RFC 3339 UTC with milliseconds.
std::string format_time_ms(int64_t ms);
// Parses RFC 3339 (Z or +hh:mm offsets, optional fraction). false if malformed.
bool parse_time_ms(std::string_view text, int64_t* ms);

}  // namespace runledger

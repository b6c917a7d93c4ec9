// The query of a request target (the part after '?') as key/value pairs.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace runledger::http {

// Parses `query`, the part of a request target after '?' (without the '?'):
//   - it is split on '&'; empty pieces ("a=1&&b=2", a trailing '&') are skipped;
//   - a piece "k=v" gives key k and value v, split at its first '=' (the value
//     may hold more '='); a piece without '=' gives its key with an empty value;
//     "=v" gives an empty key;
//   - key and value are then decoded: '+' is a space, %XX (two hex digits,
//     either case) is that byte; a '%' not followed by two hex digits is kept
//     as it is. Decoding happens after splitting, so "%26" and "%3D" are a
//     literal '&' and '=' inside a key or value, and "%2B" a literal '+'.
//     Decoded bytes are not checked to be UTF-8.
// A key given several times keeps every value, in the order given.
std::multimap<std::string, std::string> parse_query(std::string_view query);

}  // namespace runledger::http

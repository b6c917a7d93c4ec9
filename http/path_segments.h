// Path segments: how the router and the role check read a request's path.
// Both read the same decoded segments, so a path reaches exactly the route
// it names and the role check judges that route, however it was spelled
// ("/v1/%68ealth", "/v1//jobs/claim").
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace runledger::http {

// Splits "/a/b/c" into {"a","b","c"}, percent-decoding each segment; empty
// segments ("//") are skipped, and an encoded "/" (%2F) stays inside its
// segment.
std::vector<std::string> split_path(std::string_view path);
std::string percent_decode(std::string_view s);

}  // namespace runledger::http

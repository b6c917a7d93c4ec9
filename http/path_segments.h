// Path segments: how the router and the role check read a request's path.
// Both read the same decoded segments, so a path reaches exactly the route
// it names and the role check judges that route, however it was spelled
// ("/v1/%68ealth", "/v1//jobs/claim").
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace runledger::http {

// Calls `visit` with each segment of `path` as written (not decoded), in
// order; empty segments ("//") are skipped.
template <typename Visit>
void for_each_segment(std::string_view path, Visit&& visit) {
  size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '/') {
      ++i;
      continue;
    }
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    visit(path.substr(i, j - i));
    i = j;
  }
}

// Splits "/a/b/c" into {"a","b","c"}, percent-decoding each segment; empty
// segments ("//") are skipped, and an encoded "/" (%2F) stays inside its
// segment.
std::vector<std::string> split_path(std::string_view path);
std::string percent_decode(std::string_view s);

}  // namespace runledger::http

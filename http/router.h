// Router: maps METHOD + path to a handler. Patterns are literal segments
// and `{name}` placeholders that match one non-empty segment
// ("/v1/jobs/{id}/steps/{step}/start"); literal segments win over
// placeholders ("/v1/jobs/claim" before "/v1/jobs/{id}"). A path that
// matches no pattern is 404; a path that matches with another method is 405.
// Thread-safe after set-up (lookups only read).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/reply.h"
#include "http/api_request.h"

namespace runledger::http {

class Router {
 public:
  using Handler = std::function<Reply(ApiRequest&)>;
  // Handlers that stream (SSE) are served by the server itself; they are
  // registered here only so the router knows the path exists.
  void add(std::string method, std::string pattern, Handler handler);

  enum class Match { kFound, kNoPath, kNoMethod };
  // On kFound fills request.params and *handler.
  Match route(ApiRequest& request, const Handler** handler) const;

 private:
  struct Route {
    std::string method;
    std::vector<std::string> segments;
    Handler handler;
    int literals = 0;
  };
  std::vector<Route> routes_;
};

// Splits "/a/b/c" into {"a","b","c"} (percent-decoding each segment).
std::vector<std::string> split_path(std::string_view path);
std::string percent_decode(std::string_view s);

}  // namespace runledger::http

// Router: maps METHOD + path to a handler. Patterns are literal segments
// and `{name}` placeholders that match one non-empty segment
// ("/v1/jobs/{id}/steps/{step}/start"); literal segments win over
// placeholders ("/v1/jobs/claim" before "/v1/jobs/{id}"). A path that
// matches no pattern is 404; a path that matches with another method is 405.
// Thread-safe after set-up (lookups only read).
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/engine.h"
#include "engine/reply.h"
#include "http/api_request.h"

namespace runledger::http {

// What a handler hands back: a reply ready now, or a command for the engine,
// whose reply comes once it is durable (the server submits it and goes on
// serving other connections meanwhile).
// A command that is tried again while its reply is a 204 (a claim with
// wait_s): the server parks it on its loop until `wait` has passed
// (http/claim_waiters.h). Claims of one `group` (the same kinds) wait in line.
struct LongPoll {
  std::chrono::milliseconds wait;
  std::string group;
};

struct Answer {
  Answer(Reply r) : reply(std::move(r)) {}      // NOLINT: implicit by design
  Answer(Request r) : command(std::move(r)) {}  // NOLINT: implicit by design
  std::optional<Reply> reply;
  std::optional<Request> command;
  std::optional<LongPoll> long_poll;  // with a command only
};

// Runs the answer to its reply, waiting for the engine when it is a command:
// for callers that have a thread to spare (tests, the fuzzer).
Reply settle(Engine& engine, Answer answer);

class Router {
 public:
  using Handler = std::function<Answer(ApiRequest&)>;
  // A handler that may wait (on the engine or the store): the server runs it
  // on a thread that may block.
  void add(std::string method, std::string pattern, Handler handler);
  // A handler that only checks the request and builds a command (or a
  // refusal), never waiting: the server runs it on its event loop.
  void add_command(std::string method, std::string pattern, Handler handler);
  // A stream the server writes on the connection itself (the live event
  // stream): routed like the others, so that its path has a 405 and an
  // Allow like any other; `fallback` answers where there is no connection
  // to stream on (a request handed straight to the router).
  void add_stream(std::string method, std::string pattern, Handler fallback);

  enum class Match { kFound, kNoPath, kNoMethod };
  struct Route {
    std::string method;
    std::string pattern;  // as registered, e.g. "/v1/jobs/{id}"
    std::vector<std::string> segments;
    Handler handler;
    int literals = 0;
    bool may_block = true;
    bool streams = false;  // added by add_stream
  };
  // On kFound fills request.params and *route.
  Match route(ApiRequest& request, const Route** route) const;
  // The methods some route takes on `path`, for a 405's Allow header:
  // "GET, HEAD, POST" (HEAD wherever GET is; a server answers HEAD as GET
  // without its body); empty when no route has the path.
  std::string allowed_methods(std::string_view path) const;

 private:
  Route& add_route(std::string method, std::string pattern, Handler handler, bool may_block);
  std::vector<Route> routes_;
};

}  // namespace runledger::http

// runledger events tail: the live stream of a running server as JSON Lines
// (GET /v1/events/live), resumed from the last seq printed whenever the
// connection drops or the server restarts: no gap, no duplicate.
#include <chrono>
#include <cstdio>
#include <memory>
#include <set>
#include <thread>

#include "events/event_codec.h"
#include "tools/cli_commands.h"
#include "tools/cli_remote.h"

namespace runledger::cli {
namespace {

struct TailOptions {
  RemoteOptions remote;
  uint64_t after = 0;
  std::vector<std::string> types;
  uint64_t max_events = 0;  // 0: until stopped
};

// How long the tail waits before it connects again after a drop.
constexpr auto kReconnectWait = std::chrono::milliseconds(500);

int tail(const TailOptions& o) {
  // Checked before the server is asked: a misspelt type would wait for ever.
  for (const auto& t : o.types) {
    if (!is_event_type_name(t))
      return fail("--type: no event type is called '" + t + "'", kExitUsage);
  }
  int code = kExitOk;
  auto c = open_client(o.remote, &code);
  if (!c) return code;
  const std::set<std::string> types(o.types.begin(), o.types.end());
  std::string last = o.after > 0 ? std::to_string(o.after) : "";
  uint64_t printed = 0;
  bool connected_once = false;
  for (;;) {
    bool done = false;
    client::Response r = c->stream("/v1/events/live", last, [&](const client::Client::Message& m) {
      if (!m.event.empty()) return false;  // `end`: the server stops, or this reader lagged
      last = m.id;
      auto event = nlohmann::json::parse(m.data, nullptr, /*allow_exceptions=*/false);
      if (types.empty() || (event.is_object() && types.count(event.value("type", "")) != 0)) {
        std::printf("%s\n", m.data.c_str());
        std::fflush(stdout);
        ++printed;
      }
      done = o.max_events != 0 && printed >= o.max_events;
      return !done;
    });
    if (done) return kExitOk;
    if (r.status == 200) {
      connected_once = true;
    } else if ((r.status != 0 && r.status != 503) || !connected_once) {
      // Refused (a bad cursor, a token it lacks), or never reached at all.
      return exit_for(r, "events tail");
    }
    std::fprintf(stderr, "runledger: events tail: the stream ended (%s); resuming after seq %s\n",
                 r.status == 0 ? r.failure.c_str() : "closed by the server",
                 last.empty() ? "0" : last.c_str());
    std::this_thread::sleep_for(kReconnectWait);
  }
}

}  // namespace

Subcommand add_events_tail(CLI::App& events) {
  auto o = std::make_shared<TailOptions>();
  CLI::App* app = events.add_subcommand(
      "tail",
      "Follow the log of a running server as JSON Lines, resuming after a dropped connection.");
  add_remote_flags(app, &o->remote);
  app->add_option("--after", o->after, "start after this seq (default: from the first event)");
  app->add_option("--type", o->types, "only events of this type (repeatable)");
  app->add_option("--max-events", o->max_events, "stop after printing this many");
  return {app, [o] { return tail(*o); }};
}

}  // namespace runledger::cli

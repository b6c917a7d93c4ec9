// runledger events: the log as JSON Lines (each line the event JSON of the
// API), filtered by stream, type, seq range and time range. With --stream it
// reads that stream only, through the stream index.
#include <cstdio>
#include <memory>
#include <set>

#include "events/event_codec.h"
#include "events/event_json.h"
#include "tools/cli_commands.h"

namespace runledger::cli {

namespace {

struct EventsOptions {
  LogSource source;
  std::string stream;
  std::vector<std::string> types;
  uint64_t from_seq = 0;
  uint64_t to_seq = 0;
  std::string since;
  std::string until;
};

// The filters that apply per event; the seq range also bounds the read.
struct Filter {
  std::set<std::string, std::less<>> types;
  uint64_t from_seq = 0;
  uint64_t to_seq = 0;  // 0: no bound
  int64_t since_ms = INT64_MIN;
  int64_t until_ms = INT64_MAX;

  bool keeps(const fb::Event& e) const {
    if (e.seq() < from_seq || (to_seq != 0 && e.seq() > to_seq)) return false;
    if (e.recorded_at_ms() < since_ms || e.recorded_at_ms() > until_ms) return false;
    return types.empty() || types.count(event_type_name(e.payload_type())) != 0;
  }
};

int build_filter(const EventsOptions& o, Filter* f) {
  for (const auto& t : o.types) {
    if (!is_event_type_name(t))
      return fail("--type: no event type is called '" + t + "'", kExitUsage);
    f->types.insert(t);
  }
  f->from_seq = o.from_seq;
  f->to_seq = o.to_seq;
  if (f->to_seq != 0 && f->to_seq < f->from_seq) {
    return fail("--to-seq is before --from-seq", kExitUsage);
  }
  if (!o.since.empty() && !parse_time_arg("--since", o.since, &f->since_ms)) return kExitUsage;
  if (!o.until.empty() && !parse_time_arg("--until", o.until, &f->until_ms)) return kExitUsage;
  return kExitOk;
}

int run(const EventsOptions& o) {
  if (o.source.data.empty() && o.source.pg_dsn.empty()) {
    return fail("--data or --pg-dsn is required (for a running server: runledger events tail)",
                kExitUsage);
  }
  Filter filter;
  if (int code = build_filter(o, &filter); code != kExitOk) return code;
  std::string stream;
  if (!o.stream.empty() && !entity_stream(o.stream, &stream)) {
    return fail("--stream must be job/ID, connector/ID or hold/ID, got '" + o.stream + "'",
                kExitUsage);
  }
  std::unique_ptr<ReadStore> rs;
  if (Status s = ReadStore::open(o.source, &rs); !s.ok()) return fail("events", s);
  const EventStore& store = rs->store();
  Progress progress("events", store.last_seq());
  auto print = [&](const fb::Event& e, std::string_view) {
    progress.update(e.seq());
    if (!filter.keeps(e)) return true;
    std::string line = event_json(e).dump();
    line.push_back('\n');
    return std::fwrite(line.data(), 1, line.size(), stdout) == line.size();
  };
  Status s = stream.empty() ? store.read_range(filter.from_seq == 0 ? 0 : filter.from_seq - 1,
                                               filter.to_seq, print)
                            : store.read_stream(stream, filter.to_seq, print);
  if (!s.ok()) return fail("events", s);
  if (std::fflush(stdout) != 0) return fail("writing to stdout failed", kExitIoErr);
  return kExitOk;
}

}  // namespace

Subcommand add_events(CLI::App& root) {
  auto o = std::make_shared<EventsOptions>();
  CLI::App* app = root.add_subcommand(
      "events",
      "Print the log as JSON Lines, one event per line in the API's event JSON, filtered by "
      "stream, type, seq range (inclusive) and recorded time range (inclusive).");
  add_log_source(app, &o->source);
  app->add_option("--stream", o->stream, "only this stream, e.g. job/j1")->check(kNotEmpty);
  app->add_option("--type", o->types, "only events of this type (repeatable), e.g. JobLeased");
  app->add_option("--from-seq", o->from_seq, "first seq")->check(kSeqAtLeastOne);
  app->add_option("--to-seq", o->to_seq, "last seq")->check(kSeqAtLeastOne);
  app->add_option("--since", o->since, "recorded at or after this RFC 3339 time")->check(kNotEmpty);
  app->add_option("--until", o->until, "recorded at or before this RFC 3339 time")
      ->check(kNotEmpty);
  Subcommand tail = add_events_tail(*app);
  return {app, [o, tail] { return tail.app->parsed() ? tail.run() : run(*o); }};
}

}  // namespace runledger::cli

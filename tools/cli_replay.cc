// runledger replay: rebuilds every projection from the log alone (no
// snapshot, finished entities kept) and prints the state, one entity, or
// (--compare) every difference from the state the server serves.
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "engine/view_index.h"
#include "tools/cli_commands.h"
#include "tools/cli_compare.h"
#include "tools/cli_state.h"

namespace runledger::cli {

namespace {

struct ReplayOptions {
  LogSource source;
  uint64_t until_seq = 0;
  std::string until_time;
  std::string entity;
  bool compare = false;
  bool pretty = false;
};

void print_json(const nlohmann::json& j, bool pretty) {
  std::string text = pretty ? j.dump(2) : j.dump();
  std::printf("%s\n", text.c_str());
}

void write_out(std::string_view text) { std::fwrite(text.data(), 1, text.size(), stdout); }

// One list of the state: `"key": [...]`, each entity's view made, written
// and dropped in turn, laid out as nlohmann's dump of the whole would.
template <typename Map, typename View>
void print_list(std::string_view key, const Map& entities, View view, bool pretty) {
  write_out(pretty ? "  \"" : "\"");
  write_out(key);
  write_out(pretty ? "\": [" : "\":[");
  bool first = true;
  for (const auto& [id, entity] : entities) {
    std::string item = pretty ? view(entity).dump(2) : view(entity).dump();
    if (!first) write_out(",");
    first = false;
    if (!pretty) {
      write_out(item);
      continue;
    }
    // Nested two levels down. JSON text holds no raw newline inside a string.
    write_out("\n    ");
    size_t from = 0;
    for (size_t nl = item.find('\n'); nl != std::string::npos; nl = item.find('\n', from)) {
      write_out(std::string_view(item).substr(from, nl + 1 - from));
      write_out("    ");
      from = nl + 1;
    }
    write_out(std::string_view(item).substr(from));
  }
  if (pretty && !first) write_out("\n  ");
  write_out("]");
}

// {"seq": N, "jobs": [...], "connectors": [...], "holds": [...]}, in the
// order of the contract's example, each list in id order. Written one entity
// at a time: a JSON tree of the whole state, and its text, took more than
// ten times the memory of the state itself (16 GB for 833,334 jobs).
void print_state(const State& s, bool pretty) {
  const char* between = pretty ? ",\n" : ",";
  write_out(pretty ? "{\n  \"seq\": " : "{\"seq\":");
  write_out(std::to_string(s.last_seq));
  write_out(between);
  print_list(
      "jobs", s.jobs.by_id, [&](const jobs::Job& j) { return jobs::view(s, j); }, pretty);
  write_out(between);
  print_list("connectors", s.connectors.by_id, connectors::view, pretty);
  write_out(between);
  print_list("holds", s.holds.by_id, holds::view, pretty);
  write_out(pretty ? "\n}\n" : "}\n");
}

// The replayed state, or the entity behind `stream`, on stdout.
int print_replayed(const State& state, const std::string& stream, bool pretty) {
  if (stream.empty()) {
    print_state(state, pretty);
    return kExitOk;
  }
  auto view = view_of(state, stream);
  if (!view) {
    return fail(stream + " did not exist at seq " + std::to_string(state.last_seq), kExitFindings);
  }
  print_json(*view, pretty);
  return kExitOk;
}

// The comparison's report goes to stderr: stdout holds the state as JSON,
// with --compare as without it.
int compare(const EventStore& store, const State& replayed, const std::string& stream) {
  ViewMap replay = views_of(replayed);
  ViewMap server;
  uint64_t server_seq = 0;
  if (Status s = server_views(store, &server, &server_seq); !s.ok()) {
    std::fprintf(stderr, "the server's state does not load: %s\n", s.ToString().c_str());
    return kExitFindings;
  }
  if (!stream.empty()) {
    std::erase_if(replay, [&](const auto& kv) { return kv.first != stream; });
    std::erase_if(server, [&](const auto& kv) { return kv.first != stream; });
  }
  std::vector<std::string> found = differences(replay, server);
  if (stream.empty()) {
    if (Status s = view_index::check(store, &found); !s.ok()) {
      std::fprintf(stderr, "the index of stored views does not read: %s\n", s.ToString().c_str());
      return kExitFindings;
    }
  }
  if (server_seq != replayed.last_seq) {
    found.insert(found.begin(), "seq: replay " + std::to_string(replayed.last_seq) + ", server " +
                                    std::to_string(server_seq));
  }
  for (const auto& line : found) std::fprintf(stderr, "%s\n", line.c_str());
  if (!found.empty()) {
    std::fprintf(stderr, "%zu differences at seq %llu\n", found.size(),
                 static_cast<unsigned long long>(replayed.last_seq));
    return kExitFindings;
  }
  std::fprintf(stderr, "no difference at seq %llu: %zu entities compared\n",
               static_cast<unsigned long long>(replayed.last_seq), replay.size());
  return kExitOk;
}

int run(const ReplayOptions& o) {
  if (o.compare && (o.until_seq != 0 || !o.until_time.empty())) {
    return fail("--compare checks the whole log: it takes no --until-seq or --until-time",
                kExitUsage);
  }
  // The server's state is a node's: its snapshot and stored views are in its
  // data folder, not in the database.
  if (o.compare && o.source.postgres()) {
    return fail(
        "--compare compares with the state a node serves from its data folder: give that "
        "node's --data, not --pg-dsn",
        kExitUsage);
  }
  FoldLimits limits;
  limits.until_seq = o.until_seq;
  if (!o.until_time.empty()) {
    int64_t ms = 0;
    if (!parse_time_arg("--until-time", o.until_time, &ms)) return kExitUsage;
    limits.until_ms = ms;
  }
  std::string stream;
  if (!o.entity.empty() && !entity_stream(o.entity, &stream)) {
    return fail("--entity must be job/ID, connector/ID or hold/ID, got '" + o.entity + "'",
                kExitUsage);
  }
  std::unique_ptr<ReadStore> rs;
  if (Status s = ReadStore::open(o.source, &rs); !s.ok()) return fail("replay", s);
  State state;
  {
    Progress progress("replay", rs->store().last_seq());
    if (Status s = fold_log(rs->store(), limits, &state, &progress); !s.ok()) {
      return fail("replay", s);
    }
  }
  const int printed = print_replayed(state, stream, o.pretty);
  if (!o.compare) return printed;
  const int compared = compare(rs->store(), state, stream);
  return compared != kExitOk ? compared : printed;
}

}  // namespace

Subcommand add_replay(CLI::App& root) {
  auto o = std::make_shared<ReplayOptions>();
  CLI::App* app = root.add_subcommand(
      "replay",
      "Rebuild every projection from the log alone and print the state as JSON: "
      "{\"seq\", \"jobs\", \"connectors\", \"holds\"} of HTTP views, or one entity. With "
      "--compare, also report on stderr every difference from the state the server serves (its "
      "snapshot plus tail, and the stored views of finished entities); exit 1 when there is "
      "any.");
  add_log_source(app, &o->source);
  auto* seq =
      app->add_option("--until-seq", o->until_seq, "stop after this seq")->check(kSeqAtLeastOne);
  app->add_option("--until-time", o->until_time,
                  "stop before the first event recorded after this RFC 3339 time")
      ->check(kNotEmpty)
      ->excludes(seq);
  app->add_option("--entity", o->entity, "print only job/ID, connector/ID or hold/ID")
      ->check(kNotEmpty);
  app->add_flag("--compare", o->compare, "compare with the server's state, list differences");
  app->add_flag("--pretty", o->pretty, "indent the JSON");
  return {app, [o] { return run(*o); }};
}

}  // namespace runledger::cli

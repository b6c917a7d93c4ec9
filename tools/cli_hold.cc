// runledger hold list|place|release: the holds of a running server, with
// the evidence a release needs (docs/cli.md "Talking to a running server").
#include <memory>

#include "tools/cli_commands.h"
#include "tools/cli_remote.h"

namespace runledger::cli {
namespace {

using nlohmann::json;

struct HoldOptions {
  RemoteOptions remote;
  std::string id, target, kind, reason, job, note, outcome, idempotency_key;
  bool open_only = false;
  bool execution_stopped = false;
  size_t limit = 1000;
};

int hold_list(const HoldOptions& o) {
  std::string query;
  if (!o.target.empty()) query += "?target=" + client::path_segment(o.target);
  if (o.open_only) query += std::string(query.empty() ? "?" : "&") + "open=true";
  return print_list(o.remote, "hold list", "/v1/holds" + query, "holds", o.limit,
                    {"ID", "KIND", "TARGET", "JOB", "STATE", "PLACED_BY", "PLACED_AT"},
                    [](const json& h) -> std::vector<std::string> {
                      return {cell(h.value("id", json())),
                              cell(h.value("kind", json())),
                              cell(h.value("target", json())),
                              cell(h.value("job", json())),
                              h.value("released", false) ? "released" : "open",
                              cell(h.value("placed_by", json())),
                              cell(h.value("placed_at", json()))};
                    });
}

int hold_place(const HoldOptions& o) {
  json body = {{"target", o.target}, {"kind", o.kind}, {"reason", o.reason}};
  if (!o.job.empty()) body["job"] = o.job;
  return send_and_print(o.remote, "hold place", "POST", "/v1/holds", body, o.idempotency_key);
}

int hold_release(const HoldOptions& o) {
  json body = {{"note", o.note}};
  if (o.execution_stopped) body["execution_stopped"] = true;
  if (!o.outcome.empty()) body["outcome"] = o.outcome;
  return send_and_print(o.remote, "hold release", "POST",
                        "/v1/holds/" + client::path_segment(o.id) + "/release", body,
                        o.idempotency_key);
}

}  // namespace

Subcommand add_hold(CLI::App& root) {
  auto o = std::make_shared<HoldOptions>();
  CLI::App* hold = root.add_subcommand(
      "hold", "The holds of a running server: list, place, release (with its evidence).");
  hold->require_subcommand(1);
  std::vector<Verb> verbs;

  CLI::App* list_app = hold->add_subcommand("list", "List holds, in id order.");
  add_remote_flags(list_app, &o->remote);
  list_app->add_option("--target", o->target, "only holds on this target");
  list_app->add_flag("--open", o->open_only, "only holds not released yet");
  list_app->add_option("--limit", o->limit, "show at most this many (default 1000)")
      ->check(CLI::Range(size_t{1}, size_t{1'000'000}));
  verbs.push_back({list_app, [o] { return hold_list(*o); }});

  CLI::App* place_app = hold->add_subcommand("place", "Place a hold on a target.");
  add_remote_flags(place_app, &o->remote);
  place_app->add_option("--target", o->target, "the target it blocks")->required();
  place_app->add_option("--kind", o->kind, "EXECUTION_STATE_UNKNOWN or RESULT_UNKNOWN")
      ->required()
      ->check(CLI::IsMember({"EXECUTION_STATE_UNKNOWN", "RESULT_UNKNOWN"}));
  place_app->add_option("--reason", o->reason, "why, for whoever releases it")->required();
  place_app->add_option("--job", o->job, "the job it is about");
  add_idempotency_flag(place_app, &o->idempotency_key);
  verbs.push_back({place_app, [o] { return hold_place(*o); }});

  CLI::App* release_app =
      hold->add_subcommand("release", "Release a hold, with the evidence that allows it.");
  add_remote_flags(release_app, &o->remote);
  release_app->add_option("ID", o->id, "the hold's id")->required();
  release_app->add_option("--note", o->note, "what was checked")->required()->check(kNotEmpty);
  release_app->add_flag("--execution-stopped", o->execution_stopped,
                        "the work it was about is known to have stopped");
  release_app->add_option("--outcome", o->outcome, "SUCCEEDED or FAILED, for the job's attempt")
      ->check(CLI::IsMember({"SUCCEEDED", "FAILED"}));
  add_idempotency_flag(release_app, &o->idempotency_key);
  verbs.push_back({release_app, [o] { return hold_release(*o); }});
  return {hold, [verbs] { return run_chosen(verbs); }};
}

}  // namespace runledger::cli

// runledger job list|show|enqueue|cancel|rerun: the jobs of a running server
// (docs/cli.md "Talking to a running server"), through the API's client.
#include <cstdio>
#include <memory>
#include <sstream>

#include "tools/cli_commands.h"
#include "tools/cli_remote.h"

namespace runledger::cli {
namespace {

using nlohmann::json;

struct JobOptions {
  RemoteOptions remote;
  std::string id;
  std::string state, kind, target;
  size_t limit = 100;
  uint64_t as_of = 0;
  std::string input, not_before, reason, idempotency_key;
  std::vector<std::string> plan, reuse_on_rerun;
  int max_attempts = 0;  // 0: the server's default
  std::optional<int> priority;
};

std::vector<std::string> job_row(const json& j) {
  return {cell(j.value("id", json())),      cell(j.value("state", json())),
          cell(j.value("attempt", json())), cell(j.value("kind", json())),
          cell(j.value("target", json())),  cell(j.value("updated_at", json()))};
}

int job_list(const JobOptions& o) {
  std::string query;
  for (const auto& [name, value] :
       {std::pair{"state", o.state}, {"kind", o.kind}, {"target", o.target}}) {
    if (!value.empty()) {
      query += std::string(query.empty() ? "?" : "&") + name + "=" + client::path_segment(value);
    }
  }
  return print_list(o.remote, "job list", "/v1/jobs" + query, "jobs", o.limit,
                    {"ID", "STATE", "ATTEMPT", "KIND", "TARGET", "UPDATED"}, job_row);
}

int job_show(const JobOptions& o) {
  return print_one(o.remote, "job show",
                   "/v1/jobs/" + client::path_segment(o.id) +
                       (o.as_of > 0 ? "?as_of=" + std::to_string(o.as_of) : ""));
}

int job_enqueue(const JobOptions& o) {
  json body = {{"kind", o.kind}, {"target", o.target}};
  if (!o.id.empty()) body["id"] = o.id;
  if (!o.input.empty()) {
    json input = json::parse(o.input, nullptr, /*allow_exceptions=*/false);
    if (input.is_discarded())
      return fail("--input must be JSON, got '" + o.input + "'", kExitUsage);
    body["input"] = std::move(input);
  }
  if (!o.plan.empty()) body["plan"] = o.plan;
  if (!o.reuse_on_rerun.empty()) body["reuse_on_rerun"] = o.reuse_on_rerun;
  if (o.max_attempts > 0) body["max_attempts"] = o.max_attempts;
  if (o.priority) body["priority"] = *o.priority;
  if (!o.not_before.empty()) body["not_before"] = o.not_before;
  return send_and_print(o.remote, "job enqueue", "POST", "/v1/jobs", body, o.idempotency_key);
}

int job_with_reason(const JobOptions& o, const std::string& verb) {
  json body = json::object();
  if (!o.reason.empty()) body["reason"] = o.reason;
  return send_and_print(o.remote, "job " + verb, "POST",
                        "/v1/jobs/" + client::path_segment(o.id) + "/" + verb, body,
                        o.idempotency_key);
}

}  // namespace

Subcommand add_job(CLI::App& root) {
  auto o = std::make_shared<JobOptions>();
  CLI::App* job = root.add_subcommand(
      "job", "The jobs of a running server: list, show, enqueue, cancel, rerun.");
  job->require_subcommand(1);
  std::vector<Verb> verbs;

  CLI::App* list_app = job->add_subcommand("list", "List jobs, in id order.");
  add_remote_flags(list_app, &o->remote);
  list_app->add_option("--state", o->state, "only jobs in this state, e.g. RUNNING");
  list_app->add_option("--kind", o->kind, "only jobs of this kind");
  list_app->add_option("--target", o->target, "only jobs on this target");
  list_app->add_option("--limit", o->limit, "show at most this many (default 100)")
      ->check(CLI::Range(size_t{1}, size_t{1'000'000}));
  verbs.push_back({list_app, [o] { return job_list(*o); }});

  CLI::App* show_app = job->add_subcommand("show", "Show one job, now or as of a seq.");
  add_remote_flags(show_app, &o->remote);
  show_app->add_option("ID", o->id, "the job's id")->required();
  show_app->add_option("--as-of", o->as_of, "the job right after this seq")->check(kSeqAtLeastOne);
  verbs.push_back({show_app, [o] { return job_show(*o); }});

  CLI::App* enqueue_app = job->add_subcommand("enqueue", "Enqueue a job.");
  add_remote_flags(enqueue_app, &o->remote);
  enqueue_app->add_option("--kind", o->kind, "what kind of work")->required()->check(kNotEmpty);
  enqueue_app->add_option("--target", o->target, "the dataset it writes")
      ->required()
      ->check(kNotEmpty);
  enqueue_app->add_option("--id", o->id, "the job's id (default: the server makes one)");
  enqueue_app->add_option("--input", o->input, "the job's input, as JSON");
  enqueue_app->add_option("--plan", o->plan, "its steps, in order: A,B,C")->delimiter(',');
  enqueue_app->add_option("--reuse-on-rerun", o->reuse_on_rerun, "steps a rerun reuses")
      ->delimiter(',');
  enqueue_app->add_option("--max-attempts", o->max_attempts, "attempts at most (1-100)")
      ->check(CLI::Range(1, 100));
  enqueue_app->add_option("--priority", o->priority, "higher first (default 0)");
  enqueue_app->add_option("--not-before", o->not_before, "earliest start, RFC 3339")
      ->check(kNotEmpty);
  add_idempotency_flag(enqueue_app, &o->idempotency_key);
  verbs.push_back({enqueue_app, [o] { return job_enqueue(*o); }});

  for (const char* verb : {"cancel", "rerun"}) {
    CLI::App* app = job->add_subcommand(verb, std::string(verb) == "cancel"
                                                  ? "Ask for a job to be cancelled."
                                                  : "Run a finished job again, as a new attempt.");
    add_remote_flags(app, &o->remote);
    app->add_option("ID", o->id, "the job's id")->required();
    app->add_option("--reason", o->reason, "why, for the log");
    add_idempotency_flag(app, &o->idempotency_key);
    verbs.push_back({app, [o, v = std::string(verb)] { return job_with_reason(*o, v); }});
  }
  return {job, [verbs] { return run_chosen(verbs); }};
}

}  // namespace runledger::cli

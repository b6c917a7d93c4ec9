// runledger connector list|show|create|pause|resume|sync|abort|delete: the
// connectors of a running server (docs/cli.md "Talking to a running server").
#include <memory>

#include "tools/cli_commands.h"
#include "tools/cli_remote.h"

namespace runledger::cli {
namespace {

using nlohmann::json;

struct ConnectorOptions {
  RemoteOptions remote;
  std::string id, name, status, sync_status, idempotency_key;
  std::optional<int64_t> sync_schedule_s;
  size_t limit = 1000;
};

int connector_list(const ConnectorOptions& o) {
  std::string query;
  if (!o.status.empty()) query += "?status=" + o.status;
  if (!o.sync_status.empty()) {
    query += std::string(query.empty() ? "?" : "&") + "sync_status=" + o.sync_status;
  }
  return print_list(o.remote, "connector list", "/v1/connectors" + query, "connectors", o.limit,
                    {"ID", "NAME", "STATUS", "SYNC", "LAST_SYNCED", "LAST_ERROR"},
                    [](const json& k) -> std::vector<std::string> {
                      return {cell(k.value("id", json())),
                              cell(k.value("name", json())),
                              cell(k.value("status", json())),
                              cell(k.value("sync_status", json())),
                              cell(k.value("last_synced_at", json())),
                              cell(k.value("last_error", json()))};
                    });
}

int connector_show(const ConnectorOptions& o) {
  return print_one(o.remote, "connector show", "/v1/connectors/" + client::path_segment(o.id));
}

int connector_create(const ConnectorOptions& o) {
  json body = {{"name", o.name}};
  if (!o.id.empty()) body["id"] = o.id;
  if (o.sync_schedule_s) body["sync_schedule_s"] = *o.sync_schedule_s;
  return send_and_print(o.remote, "connector create", "POST", "/v1/connectors", body,
                        o.idempotency_key);
}

// The verbs that name a connector and send one command about it.
struct ConnectorCommand {
  const char* verb;
  const char* help;
  const char* method;
  const char* suffix;  // after /v1/connectors/{id}
  const char* status;  // the PATCH's new status, or null
};

constexpr ConnectorCommand kConnectorCommands[] = {
    {"pause", "Pause a connector: no sync starts while it is paused.", "PATCH", "", "paused"},
    {"resume", "Resume a paused connector.", "PATCH", "", "active"},
    {"sync", "Start a sync now.", "POST", "/sync", nullptr},
    {"abort", "Abort the sync in progress.", "POST", "/sync/abort", nullptr},
    {"delete", "Delete a connector.", "DELETE", "", nullptr},
};

int connector_command(const ConnectorOptions& o, const ConnectorCommand& cmd) {
  json body = cmd.status != nullptr ? json{{"status", cmd.status}} : json::object();
  if (std::string(cmd.method) == "DELETE") body = nullptr;
  return send_and_print(o.remote, std::string("connector ") + cmd.verb, cmd.method,
                        "/v1/connectors/" + client::path_segment(o.id) + cmd.suffix, body,
                        o.idempotency_key);
}

}  // namespace

Subcommand add_connector(CLI::App& root) {
  auto o = std::make_shared<ConnectorOptions>();
  CLI::App* connector = root.add_subcommand(
      "connector",
      "The connectors of a running server: list, show, create, pause, resume, sync, abort, "
      "delete.");
  connector->require_subcommand(1);
  std::vector<Verb> verbs;

  CLI::App* list_app = connector->add_subcommand("list", "List connectors, in id order.");
  add_remote_flags(list_app, &o->remote);
  list_app->add_option("--status", o->status, "only those with this status")
      ->check(CLI::IsMember({"active", "paused", "error", "deleting"}));
  list_app->add_option("--sync-status", o->sync_status, "only those with this sync status")
      ->check(CLI::IsMember({"idle", "running"}));
  list_app->add_option("--limit", o->limit, "show at most this many (default 1000)")
      ->check(CLI::Range(size_t{1}, size_t{1'000'000}));
  verbs.push_back({list_app, [o] { return connector_list(*o); }});

  CLI::App* show_app = connector->add_subcommand("show", "Show one connector.");
  add_remote_flags(show_app, &o->remote);
  show_app->add_option("ID", o->id, "the connector's id")->required();
  verbs.push_back({show_app, [o] { return connector_show(*o); }});

  CLI::App* create_app = connector->add_subcommand("create", "Create a connector.");
  add_remote_flags(create_app, &o->remote);
  create_app->add_option("--name", o->name, "its name")->required()->check(kNotEmpty);
  create_app->add_option("--id", o->id, "its id (default: the server makes one)");
  create_app->add_option("--sync-schedule-s", o->sync_schedule_s, "sync every N seconds")
      ->check(CLI::Range(int64_t{1}, int64_t{365} * 24 * 3600));
  add_idempotency_flag(create_app, &o->idempotency_key);
  verbs.push_back({create_app, [o] { return connector_create(*o); }});

  for (const ConnectorCommand& cmd : kConnectorCommands) {
    CLI::App* app = connector->add_subcommand(cmd.verb, cmd.help);
    add_remote_flags(app, &o->remote);
    app->add_option("ID", o->id, "the connector's id")->required();
    add_idempotency_flag(app, &o->idempotency_key);
    verbs.push_back({app, [o, &cmd] { return connector_command(*o, cmd); }});
  }
  return {connector, [verbs] { return run_chosen(verbs); }};
}

}  // namespace runledger::cli

// runledger gate TARGET: may new work start on TARGET? Asks the running
// server (GET /v1/targets/<target>/gate) or, with --data, computes the gate
// from the data folder's state. Exit 0 yes, 76 no with each reason on its own
// line; 69 when the server cannot be reached, 64 for bad arguments, 70 for
// any other error. Scripts that are not engine workers call it before they
// start work (docs/domain.md section 3).
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "client/client.h"
#include "engine/state_loader.h"
#include "tools/cli_commands.h"

namespace runledger::cli {

namespace {

// A gate is one small read: a server that does not answer in this long is
// as good as unreachable for a script waiting to start.
constexpr std::chrono::seconds kConnectTimeout{3};
constexpr std::chrono::seconds kReadTimeout{10};
constexpr char kTokenEnv[] = "RUNLEDGER_TOKEN";
constexpr int kHttpOk = 200;

struct GateOptions {
  std::string target;
  std::string data;
  client::ClientOptions client;
};

std::string reason_line(const nlohmann::json& r, const std::string& target) {
  const std::string code = r.value("code", "");
  if (code == "hold") {
    return "hold " + r.value("hold", "?") + " (" + r.value("kind", "?") + ") blocks target " +
           target;
  }
  if (code == "attempt_active") {
    std::string state =
        r.contains("state") && r["state"].is_string() ? r["state"].get<std::string>() : "active";
    return "job " + r.value("job", "?") + " is " + state + " on target " + target;
  }
  return code + " " + r.dump();
}

// Prints the gate's answer and returns 0 (may start) or 76.
int answer(const nlohmann::json& gate, const std::string& target) {
  if (!gate.is_object() || !gate.contains("may_start") || !gate["may_start"].is_boolean()) {
    return fail("the gate's answer is not understood: " + gate.dump(), kExitSoftware);
  }
  if (gate.contains("recovery_needed") && gate["recovery_needed"].is_array()) {
    for (const auto& r : gate["recovery_needed"]) {
      std::printf("recovery needed: hold %s (%s)\n", r.value("hold", "?").c_str(),
                  r.value("kind", "?").c_str());
    }
  }
  if (gate["may_start"].get<bool>()) {
    std::printf("may start: %s\n", target.c_str());
    return kExitOk;
  }
  if (gate.contains("reasons") && gate["reasons"].is_array()) {
    for (const auto& r : gate["reasons"]) std::printf("%s\n", reason_line(r, target).c_str());
  }
  return kExitGateClosed;
}

int ask_server(const GateOptions& o) {
  client::ClientOptions co = o.client;
  co.connect_timeout = kConnectTimeout;
  co.read_timeout = kReadTimeout;
  co.tries = 1;  // a script asks again when it wants to
  if (co.token.empty() && co.token_file.empty() && std::getenv(kTokenEnv) != nullptr) {
    co.token = std::getenv(kTokenEnv);
  }
  std::unique_ptr<client::Client> c;
  if (Status s = client::Client::open(co, &c); !s.ok()) return fail(s.message(), kExitUsage);
  client::Response r = c->get("/v1/targets/" + client::path_segment(o.target) + "/gate");
  if (r.status == 0) return fail(r.failure, kExitUnavailable);
  if (r.status != kHttpOk) {
    return fail("the server answered " + std::to_string(r.status) + ": " + r.message(),
                kExitSoftware);
  }
  return answer(r.json, o.target);
}

int read_folder(const GateOptions& o) {
  std::unique_ptr<ReadStore> rs;
  if (Status s = ReadStore::open(o.data, &rs); !s.ok()) {
    fail("gate", s);
    return kExitSoftware;  // the gate's codes: anything but unreachable or usage is 70
  }
  State state;
  LoadReport report;
  if (Status s = load_state(rs->store(), LoadOptions{}, &state, &report); !s.ok()) {
    fail("gate", s);
    return kExitSoftware;
  }
  return answer(holds::gate(state, o.target), o.target);
}

int run(const GateOptions& o) {
  if (o.target.empty()) return fail("TARGET must not be empty", kExitUsage);
  return o.data.empty() ? ask_server(o) : read_folder(o);
}

}  // namespace

Subcommand add_gate(CLI::App& root) {
  auto o = std::make_shared<GateOptions>();
  CLI::App* app = root.add_subcommand(
      "gate",
      "May new work start on TARGET? Asks the server (--server, default $RUNLEDGER_SERVER, else "
      "http://127.0.0.1:8080) or reads a data folder (--data). Exit 0 yes; 76 no, printing each "
      "reason; 69 server unreachable; 64 bad arguments; 70 any other error.");
  app->add_option("TARGET", o->target, "the target, e.g. a dataset or partition")->required();
  auto* server = app->add_option("--server", o->client.server, "server URL");
  app->add_option("--data", o->data, "read this data folder instead of asking a server")
      ->excludes(server);
  app->add_option("--token", o->client.token, "bearer token (default $RUNLEDGER_TOKEN)");
  app->add_option("--token-file", o->client.token_file,
                  "file whose first line is the bearer token (default $RUNLEDGER_TOKEN_FILE)");
  app->add_option("--cacert", o->client.cacert, "CA certificate to trust the server's with");
  app->add_option("--cert", o->client.cert, "client certificate (PEM), with --key");
  app->add_option("--key", o->client.key, "the client certificate's key (PEM)");
  return {app, [o] { return run(*o); }};
}

}  // namespace runledger::cli

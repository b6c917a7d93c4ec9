// runledger gate TARGET: may new work start on TARGET? Asks the running
// server (GET /v1/targets/<target>/gate) or, with --data, computes the gate
// from the data folder's state. Exit 0 yes, 76 no with each reason on its own
// line; 69 when the server cannot be reached, 64 for bad arguments, 70 for
// any other error. Scripts that are not engine workers call it before they
// start work (domain.md section 3).
#include <httplib.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <regex>

#include "engine/state_loader.h"
#include "tools/cli_commands.h"

namespace runledger::cli {

namespace {

constexpr const char* kDefaultServer = "http://127.0.0.1:8080";
constexpr const char* kServerEnv = "RUNLEDGER_SERVER";
constexpr const char* kTokenEnv = "RUNLEDGER_TOKEN";
// A gate is one small read: a server that does not answer in this long is
// as good as unreachable for a script waiting to start.
constexpr time_t kConnectTimeoutS = 3;
constexpr time_t kReadTimeoutS = 10;
constexpr int kHttpOk = 200;

struct GateOptions {
  std::string target;
  std::string server;
  std::string data;
  std::string token;
};

// Percent-encodes everything but RFC 3986's unreserved characters, so a
// target holding '/' stays one path segment.
std::string url_encode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out += {'%', kHex[c >> 4], kHex[c & 0xF]};
    }
  }
  return out;
}

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
  std::string server = o.server;
  if (server.empty()) server = std::getenv(kServerEnv) ? std::getenv(kServerEnv) : "";
  if (server.empty()) server = kDefaultServer;
  while (!server.empty() && server.back() == '/') server.pop_back();
  // The client library takes scheme://host[:port] and nothing more: a path
  // or another scheme would otherwise surface as "unreachable".
  static const std::regex kServerUrl(
      R"(https?://([^/:?#@\[\]]+|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?)");
  if (!std::regex_match(server, kServerUrl)) {
    return fail("--server must be http://HOST[:PORT] or https://HOST[:PORT], got '" + server + "'",
                kExitUsage);
  }
  httplib::Client client(server);
  if (!client.is_valid()) return fail("--server is not a usable URL: '" + server + "'", kExitUsage);
  client.set_connection_timeout(kConnectTimeoutS, 0);
  client.set_read_timeout(kReadTimeoutS, 0);
  std::string token = o.token;
  if (token.empty() && std::getenv(kTokenEnv)) token = std::getenv(kTokenEnv);
  if (!token.empty()) client.set_bearer_token_auth(token.c_str());
  auto res = client.Get(("/v1/targets/" + url_encode(o.target) + "/gate").c_str());
  if (!res) {
    return fail("cannot reach the server at " + server + ": " + httplib::to_string(res.error()),
                kExitUnavailable);
  }
  auto body = nlohmann::json::parse(res->body, nullptr, /*allow_exceptions=*/false);
  if (res->status != kHttpOk) {
    std::string why = body.is_object() ? body.value("error", res->body) : res->body;
    return fail("the server answered " + std::to_string(res->status) + ": " + why, kExitSoftware);
  }
  return answer(body, o.target);
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
  auto* server = app->add_option("--server", o->server, "server URL");
  app->add_option("--data", o->data, "read this data folder instead of asking a server")
      ->excludes(server);
  app->add_option("--token", o->token, "bearer token (default $RUNLEDGER_TOKEN)");
  return {app, [o] { return run(*o); }};
}

}  // namespace runledger::cli

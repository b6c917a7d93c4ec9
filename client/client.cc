#include "client/client.h"

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <random>
#include <regex>
#include <thread>

#include <httplib.h>

#include "base/random_bytes.h"
#include "base/sha256.h"

namespace runledger::client {
namespace {

std::string from_env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

// A request that got no answer, or a 503 (the server could not write, or is
// stopping): nothing was done, so it may be sent again.
bool worth_another_try(const Response& r) { return r.status == 0 || r.status == 503; }

}  // namespace

// scheme://host[:port] and nothing more: a path or another scheme would
// otherwise surface later as "cannot reach".
const std::regex& server_url() {
  static const std::regex kServerUrl(
      R"(https?://([^/:?#@\[\]]+|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?)");
  return kServerUrl;
}

namespace {}  // namespace

std::string Response::message() const {
  if (status == 0) return failure;
  if (json.is_object() && json.contains("error") && json["error"].is_string()) {
    return json["error"].get<std::string>();
  }
  return body.empty() ? "HTTP " + std::to_string(status) : body;
}

Status Client::open(ClientOptions o, std::unique_ptr<Client>* out) {
  std::string server = !o.server.empty() ? o.server : from_env(kServerEnv);
  if (server.empty()) server = kDefaultServer;
  while (!server.empty() && server.back() == '/') server.pop_back();
  // scheme://host[:port] and nothing more: a path or another scheme would
  // otherwise surface later as "cannot reach".
  if (!std::regex_match(server, server_url())) {
    return Status::Invalid("the server must be http://HOST[:PORT] or https://HOST[:PORT], got '" +
                           server + "'");
  }
  if (o.cert.empty() != o.key.empty()) {
    return Status::Invalid("a client certificate needs both --cert and --key");
  }
  std::unique_ptr<Client> c(new Client());
  const std::string token_file = !o.token_file.empty() ? o.token_file : from_env(kTokenFileEnv);
  if (!token_file.empty()) {
    std::ifstream in(token_file);
    std::string line;
    if (!in || !std::getline(in, line)) {
      return Status::Invalid("cannot read a token from the token file " + token_file);
    }
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front()))) {
      line.erase(0, 1);
    }
    if (line.empty()) return Status::Invalid("the token file " + token_file + " holds no token");
    c->token_ = line;
  } else {
    c->token_ = o.token;
  }
  c->tries_ = std::max(1, o.tries);
  c->options_ = std::move(o);
  if (Status st = c->connect_to(server); !st.ok()) return st;
  *out = std::move(c);
  return Status::Ok();
}

Status Client::connect_to(const std::string& server) {
  const ClientOptions& o = options_;
  auto http = o.cert.empty() ? std::make_unique<httplib::Client>(server)
                             : std::make_unique<httplib::Client>(server, o.cert, o.key);
  if (!http->is_valid()) return Status::Invalid("the server URL is not usable: " + server);
  if (!o.cacert.empty()) http->set_ca_cert_path(o.cacert);
  http->set_connection_timeout(o.connect_timeout);
  http->set_read_timeout(o.read_timeout);
  http->set_write_timeout(o.read_timeout);
  http->set_keep_alive(true);
  // A request's head and body leave in two writes: without this the body
  // waits for the server's delayed ACK of the head, 40 ms a call.
  http->set_tcp_nodelay(true);
  if (!token_.empty()) http->set_bearer_token_auth(token_);
  std::lock_guard<std::mutex> lock(http_mutex_);
  http_ = std::move(http);
  server_ = server;
  return Status::Ok();
}

void Client::abort() {
  aborted_ = true;
  std::lock_guard<std::mutex> lock(http_mutex_);
  if (http_) http_->stop();  // the read in progress returns at once
}

// A standby of a cluster names the leader (docs/cluster.md): the request
// goes there, under the same key, and so does every later one.
bool Client::follow_leader(const Response& r) {
  if (r.status != 503 || !r.json.is_object() || r.json.value("code", "") != "not_leader") {
    return false;
  }
  const auto leader = r.json.find("leader");
  if (leader == r.json.end() || !leader->is_string()) return false;
  std::string url = leader->get<std::string>();
  while (!url.empty() && url.back() == '/') url.pop_back();
  if (url == server_ || !std::regex_match(url, server_url())) return false;
  return connect_to(url).ok();
}

Client::~Client() = default;

Response Client::once(const std::string& method, const std::string& path, const std::string& body,
                      const std::string& key, std::chrono::steady_clock::time_point give_up_at) {
  httplib::Request req;
  req.method = method;
  req.path = path;
  if (!key.empty()) req.headers.emplace("Idempotency-Key", key);
  if (method != "GET") {
    req.body = body;
    req.headers.emplace("Content-Type", "application/json");
  }
  Response r;
  if (aborted_) {
    r.failure = "aborted";
    return r;
  }
  // A caller that must act by `give_up_at` waits no longer for the answer.
  const bool bounded = give_up_at != std::chrono::steady_clock::time_point::max();
  if (bounded) {
    const auto left = std::max(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   give_up_at - std::chrono::steady_clock::now()),
                               std::chrono::milliseconds(1));
    http_->set_connection_timeout(
        std::min<std::chrono::milliseconds>(left, options_.connect_timeout));
    http_->set_read_timeout(std::min<std::chrono::milliseconds>(left, options_.read_timeout));
  }
  httplib::Result res = http_->send(req);
  if (bounded) {
    http_->set_connection_timeout(options_.connect_timeout);
    http_->set_read_timeout(options_.read_timeout);
  }
  if (aborted_) {
    r.failure = "aborted";
    return r;
  }
  if (!res) {
    r.failure = "cannot reach the server at " + server_ + ": " + httplib::to_string(res.error());
    return r;
  }
  r.status = res->status;
  r.body = res->body;
  r.json = nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  return r;
}

Response Client::get(const std::string& path) { return retried("GET", path, "", ""); }

Response Client::send(const std::string& method, const std::string& path,
                      const nlohmann::json& body, std::string key,
                      std::chrono::steady_clock::time_point give_up_at) {
  if (key.empty()) key = new_idempotency_key();
  return retried(method, path, body.is_null() ? "" : body.dump(), key, give_up_at);
}

Response Client::retried(const std::string& method, const std::string& path,
                         const std::string& body, const std::string& key,
                         std::chrono::steady_clock::time_point give_up_at) {
  std::chrono::milliseconds wait = kRetryFirstWait;
  std::minstd_rand jitter(std::random_device{}());
  for (int attempt = 1;; ++attempt) {
    Response r = once(method, path, body, key, give_up_at);
    if (attempt < tries_ && follow_leader(r)) continue;  // at once: another server
    if (!worth_another_try(r) || attempt >= tries_ || aborted_) return r;
    const auto spread = static_cast<unsigned>(wait.count() / 2 + 1);
    const auto pause = wait + std::chrono::milliseconds(jitter() % spread);
    if (std::chrono::steady_clock::now() + pause >= give_up_at) return r;
    std::this_thread::sleep_for(pause);
    wait = std::min(wait * 2, kRetryWaitMax);
  }
}

Response Client::stream(const std::string& path, const std::string& last_event_id,
                        const std::function<bool(const Message&)>& on_message) {
  httplib::Headers headers;
  if (!last_event_id.empty()) headers.emplace("Last-Event-ID", last_event_id);
  Response r;
  std::string pending;
  bool stopped = false;
  httplib::Result res = http_->Get(
      path, headers,
      [&](const httplib::Response& head) {
        r.status = head.status;
        return true;
      },
      [&](const char* data, size_t n) {
        if (r.status != 200) {
          r.body.append(data, n);
          return true;
        }
        pending.append(data, n);
        // A message ends at an empty line; its fields are "name: value" lines.
        for (size_t end; (end = pending.find("\n\n")) != std::string::npos;) {
          Message m;
          std::string_view block(pending.data(), end);
          bool any = false;
          while (!block.empty()) {
            const size_t nl = block.find('\n');
            std::string_view line = block.substr(0, nl);
            block = nl == std::string_view::npos ? std::string_view() : block.substr(nl + 1);
            if (line.empty() || line.front() == ':') continue;  // a comment: keep-alive
            const size_t colon = line.find(':');
            std::string_view name = line.substr(0, colon);
            std::string_view value =
                colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1);
            if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
            any = true;
            if (name == "id") m.id.assign(value);
            if (name == "event") m.event.assign(value);
            if (name == "data") {
              if (!m.data.empty()) m.data.push_back('\n');
              m.data.append(value);
            }
          }
          pending.erase(0, end + 2);
          if (any && !on_message(m)) {
            stopped = true;
            return false;
          }
        }
        return true;
      });
  if (!res && !stopped && r.status == 0) {
    r.failure = "cannot reach the server at " + server_ + ": " + httplib::to_string(res.error());
  }
  if (r.status != 200) r.json = nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  return r;
}

std::string new_idempotency_key() { return random_hex(16); }

std::string path_segment(std::string_view s) {
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

}  // namespace runledger::client

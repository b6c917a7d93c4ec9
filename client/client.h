// Client: the runledger HTTP API from a program's side (docs/api.md), written
// once for every tool that talks to a running server: the CLI's verbs
// (docs/cli.md "Talking to a running server") and `runledger gate`.
//
// - The server is a URL `http://HOST[:PORT]` or `https://HOST[:PORT]`;
//   unset, $RUNLEDGER_SERVER, else http://127.0.0.1:8080. Over https the
//   server's certificate is checked against the system's CAs, or against
//   `cacert`; `cert` and `key` present a client certificate.
// - The bearer token is the first line of `token_file` (unset:
//   $RUNLEDGER_TOKEN_FILE), never taken from the command line, where other
//   users of the machine could read it.
// - A command (POST, PATCH, DELETE) always carries an Idempotency-Key, the
//   caller's or a fresh one of 128 random bits, and is sent again under the
//   same key while no answer comes or the server answers 503: the server
//   then acts on it once, however many times it arrived. Reads are retried
//   likewise. Waits between tries double from kRetryFirstWait, with jitter.
// - A standby of a cluster answers 503 not_leader with the leader's URL:
//   the request is sent there at once, under the same key, and the client
//   stays with that server (docs/cluster.md).
// Not thread-safe: one Client per thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <regex>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace httplib {
class Client;
}

namespace runledger::client {

inline constexpr char kDefaultServer[] = "http://127.0.0.1:8080";
inline constexpr char kServerEnv[] = "RUNLEDGER_SERVER";
inline constexpr char kTokenFileEnv[] = "RUNLEDGER_TOKEN_FILE";
inline constexpr std::chrono::milliseconds kRetryFirstWait{200};
inline constexpr std::chrono::milliseconds kRetryWaitMax{2000};

struct ClientOptions {
  std::string server;      // empty: $RUNLEDGER_SERVER, else kDefaultServer
  std::string token_file;  // empty: $RUNLEDGER_TOKEN_FILE, else no token
  std::string token;       // the token itself, when no file gives one (gate's --token)
  std::string cacert;      // a CA file that signs the server's certificate
  std::string cert;        // a client certificate (PEM) ...
  std::string key;         // ... and its key
  std::chrono::seconds connect_timeout{3};
  // Longer than the longest claim wait (30 s), which is an answer, not a hang.
  std::chrono::seconds read_timeout{40};
  int tries = 4;  // sends of one request at most, the first included
};

struct Response {
  int status = 0;       // 0: no answer at all
  std::string body;     // as received
  nlohmann::json json;  // the body parsed (discarded when not JSON)
  std::string failure;  // why there was no answer, when status is 0
  // The server's error sentence, else the body, else why nothing came.
  std::string message() const;
};

class Client {
 public:
  // Invalid for a server that is not such a URL, a token file that cannot
  // be read or holds no token, or a certificate without its key.
  static Status open(ClientOptions options, std::unique_ptr<Client>* out);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  Response get(const std::string& path);
  // `key`: the Idempotency-Key; empty, a fresh one (the same for every try).
  // No try is begun after `give_up_at` (a caller that must act by then).
  Response send(const std::string& method, const std::string& path, const nlohmann::json& body,
                std::string key = "",
                std::chrono::steady_clock::time_point give_up_at =
                    std::chrono::steady_clock::time_point::max());

  // One Server-Sent Events message: its id, its event name ("" for a
  // plain message) and its data.
  struct Message {
    std::string id, event, data;
  };
  // GETs a Server-Sent Events stream (GET /v1/events/live), from after
  // `last_event_id` when not empty, calling `on_message` for each message
  // until it returns false, the stream ends or the connection drops. Not
  // retried: the caller resumes from the last id it got. The response's
  // status (0: no answer); its body only when the status is not 200.
  Response stream(const std::string& path, const std::string& last_event_id,
                  const std::function<bool(const Message&)>& on_message);

  const std::string& server() const { return server_; }

  // Ends the call in progress on another thread at once (its Response has
  // status 0 and the failure "aborted") and answers every later call so,
  // without a try. Thread-safe; for a program that stops, such as a runner
  // told to stop while its claim waits for work. A call that was just
  // starting may open its connection after this: call it again until that
  // call returned.
  void abort();

 private:
  Client() = default;
  // Points the client at `server` (a URL server_url() matches).
  Status connect_to(const std::string& server);
  bool follow_leader(const Response& r);
  Response once(const std::string& method, const std::string& path, const std::string& body,
                const std::string& key,
                std::chrono::steady_clock::time_point give_up_at =
                    std::chrono::steady_clock::time_point::max());
  // once(), again while worth_another_try, at most tries_ times and while
  // the wait before the next try ends before `give_up_at`.
  Response retried(const std::string& method, const std::string& path, const std::string& body,
                   const std::string& key,
                   std::chrono::steady_clock::time_point give_up_at =
                       std::chrono::steady_clock::time_point::max());

  ClientOptions options_;
  std::string server_;
  std::string token_;
  int tries_ = 1;
  std::atomic<bool> aborted_{false};
  std::mutex http_mutex_;  // http_ changes (follow_leader) while abort() may use it
  std::unique_ptr<httplib::Client> http_;
};

// What a server URL must look like: http(s)://HOST[:PORT].
const std::regex& server_url();

// 128 random bits as 32 hex characters: a key nobody else will send.
std::string new_idempotency_key();
// `s` as one path segment: every byte but RFC 3986's unreserved ones
// percent-encoded (a target holding '/' stays one segment).
std::string path_segment(std::string_view s);

}  // namespace runledger::client

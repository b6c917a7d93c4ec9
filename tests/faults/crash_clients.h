// The clients of the crash test: each drives its own entities through the
// HTTP API (a job worker runs W1 job after job; a connector client syncs,
// reports, aborts, pauses and resumes one connector) and records what the
// server acknowledged, so the test can hold the server to it after a kill.
//
// Every command carries its own Idempotency-Key. A command that got no
// answer (the server died under it) has an unknown outcome: the client sends
// it again, byte for byte, when the server is back, and the reply tells it
// what happened (docs/api.md "Idempotency": the first reply, repeated, or
// the command executed now). The client then continues from what that reply
// shows, never from what it hoped.
//
// Not thread-safe: one thread runs one client at a time; the driver reads a
// client's record only while no thread runs it.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/http/api_client.h"

namespace runledger::testing {

// One command as sent; kept until it gets an answer.
struct SentCommand {
  std::string method;
  std::string path;
  std::string body;
  std::string key;     // Idempotency-Key
  std::string what;    // the command, e.g. "claim", "step_done", "sync"
  std::string stream;  // the entity it acts on, "job/ID" or "connector/ID"
};

// A 2xx reply: the entity version it showed, and the event the log must
// hold at that version (the last event of the command).
struct Ack {
  std::string what;
  std::string stream;
  uint64_t version = 0;
  std::set<std::string> last_types;  // the types the command's last event may have
  int attempt = 0;                   // the job's attempt the reply named (0: connectors)
  std::string step;                  // a step command's step
  std::string sync_id;               // a sync start's sync id
  bool resent = false;               // the reply came to a resend after a kill
};

struct ClientStats {
  uint64_t sent = 0;     // requests, resends included
  uint64_t acked = 0;    // 2xx replies that acknowledged a command
  uint64_t unknown = 0;  // commands left without an answer by a kill
  uint64_t resent = 0;   // of those, answered when sent again
  uint64_t applied = 0;  // of those, found applied before the kill
  uint64_t nothing = 0;  // 2xx replies without effect (a claim's 204)
};

class CrashClient {
 public:
  CrashClient(std::string name, uint64_t seed) : name_(std::move(name)), rng_(seed) {}
  virtual ~CrashClient() = default;

  // Sends commands until a request gets no answer (the server was killed) or
  // `stop`. A request without an answer before `killed` is a problem.
  void run(int port, const std::atomic<bool>& stop, const std::atomic<bool>& killed);

  // Called by the driver after a restart, before run(): the version the
  // server now shows for the stream of the unanswered command (0: none), so
  // the resend's reply can be checked against it (invariant 7 across a kill).
  void observed_after_restart(uint64_t version) { observed_version_ = version; }

  const std::string& name() const { return name_; }
  const std::vector<Ack>& acks() const { return acks_; }
  // The last acknowledged view of each entity this client acts on.
  const std::map<std::string, nlohmann::json>& views() const { return views_; }
  // The streams acknowledged since the last call.
  std::set<std::string> take_touched() { return std::exchange(touched_, {}); }
  const std::optional<SentCommand>& unanswered() const { return pending_; }
  const ClientStats& stats() const { return stats_; }
  // What went wrong since the last call.
  std::vector<std::string> take_problems() { return std::exchange(problems_, {}); }

 protected:
  // The next command, decided from the last acknowledged views.
  virtual SentCommand next_command() = 0;
  // Takes a reply that is not a transport failure; records acks and views
  // through ack(), problems through problem().
  virtual void on_reply(const SentCommand& c, const ApiReply& r) = 0;

  SentCommand command(std::string method, std::string path, const nlohmann::json& body,
                      std::string what, std::string stream);
  // Records the ack of `c` with the entity `view` its reply showed.
  Ack& ack(const SentCommand& c, const nlohmann::json& view, std::set<std::string> last_types);
  void no_effect() { ++stats_.nothing; }
  void problem(const std::string& what);
  bool chance(int percent) { return std::uniform_int_distribution<int>(1, 100)(rng_) <= percent; }
  const nlohmann::json* view_of(const std::string& stream) const;

 private:
  std::string name_;
  std::mt19937_64 rng_;
  uint64_t keys_ = 0;
  std::optional<SentCommand> pending_;
  bool resending_ = false;
  uint64_t observed_version_ = 0;
  std::vector<Ack> acks_;
  std::map<std::string, nlohmann::json> views_;
  std::set<std::string> touched_;
  ClientStats stats_;
  std::vector<std::string> problems_;
};

// A worker running W1 (enqueue, claim, start, each step start + done) on
// jobs of its own kind and target, one after the other; now and then a step
// fails retryably, which schedules a new attempt the worker claims again.
class JobWorker final : public CrashClient {
 public:
  // Leases outlive any run of the test: expiry is not what it tests.
  static constexpr int kLeaseS = 3600;
  static constexpr int kMaxAttempts = 3;
  static constexpr int kStepFailPercent = 4;

  JobWorker(int number, uint64_t seed);

 protected:
  SentCommand next_command() override;
  void on_reply(const SentCommand& c, const ApiReply& r) override;

 private:
  SentCommand worker_command(const nlohmann::json& job, const std::string& action,
                             const std::string& what,
                             nlohmann::json body = nlohmann::json::object());
  SentCommand step_command(const nlohmann::json& job);
  std::string kind_;
  std::string job_;    // the current job's stream ("" before the first)
  std::string token_;  // its lease token, from the claim's reply
  int jobs_ = 0;
  int empty_claims_ = 0;
};

// A connector client: creates its connector, then starts syncs and reports
// them succeeded or failed, aborts some, pauses and resumes the connector.
class ConnectorClient final : public CrashClient {
 public:
  static constexpr int kPausePercent = 15;
  static constexpr int kAbortPercent = 20;
  static constexpr int kFailPercent = 30;
  static constexpr int kDocumentsPerSync = 3;

  ConnectorClient(int number, uint64_t seed);

 protected:
  SentCommand next_command() override;
  void on_reply(const SentCommand& c, const ApiReply& r) override;

 private:
  SentCommand report(const nlohmann::json& conn);
  std::string id_;
  int syncs_ = 0;
};

}  // namespace runledger::testing

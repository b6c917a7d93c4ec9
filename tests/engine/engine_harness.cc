// EngineHarness and the request helpers: see engine_harness.h.
#include "tests/engine/engine_harness.h"

#include <chrono>
#include <stdexcept>

#include "base/sha256.h"
#include "engine/idempotency.h"
#include "engine/state_loader.h"
#include "http/rejection_status.h"
#include "tests/engine/state_digest.h"

namespace runledger::testing {

EngineOptions test_engine_options() {
  EngineOptions o;
  o.timers = false;
  o.policy.lease_min_s = 1;
  o.snapshot_events_per_live_entity = 0;  // tests count events to the next snapshot
  return o;
}

EngineHarness::EngineHarness(EngineOptions opts, const Clock* clock)
    : options(std::move(opts)), engine_clock_(clock ? clock : &this->clock) {
  open();
}

EngineHarness::~EngineHarness() { close(); }

void EngineHarness::open() {
  std::unique_ptr<EventStore> rocks;
  Status st = open_rocksdb_store(dir_.path(), StoreOptions{}, &rocks);
  if (!st.ok()) throw std::runtime_error("opening the store failed: " + st.ToString());
  auto faulty = std::make_shared<FaultyStore>(std::move(rocks));
  faulty_ = faulty.get();
  recorder_ = std::make_shared<RecordingStore>(faulty);
  st = Engine::open(recorder_, *engine_clock_, options, &engine_);
  if (!st.ok()) throw std::runtime_error("opening the engine failed: " + st.ToString());
}

void EngineHarness::close() {
  if (engine_) engine_->shutdown();
  engine_.reset();
  recorder_.reset();  // the last owner: closes RocksDB and frees its LOCK
  faulty_ = nullptr;
}

Reply outcome_reply(const State& s, const Decision* d) {
  if (d->rejection) {
    const Rejection& r = *d->rejection;
    return Reply::error(http::http_status(r.code), std::string(code_name(r.code)), r.message,
                        r.extra);
  }
  nlohmann::json types = nlohmann::json::array();
  for (const auto& e : d->events) types.push_back(std::string(event_type_name(e.payload.type)));
  return Reply::json(200, {{"seq", s.last_seq}, {"events", types}, {"body", d->body}});
}

nlohmann::json body_json(const Reply& r) {
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  return j.is_discarded() ? nlohmann::json() : j;
}

std::string claimed_job(const Reply& r) {
  auto j = body_json(r);
  if (r.status != 200 || !j.is_object() || !j.contains("body")) return "";
  const auto& body = j["body"];
  if (!body.is_object() || !body.contains("job") || !body["job"].is_string()) return "";
  return body["job"].get<std::string>();
}

Request command_request(Command c, const std::string& idempotency_key) {
  Request r;
  r.command = std::move(c);
  r.render = outcome_reply;
  r.actor = "tester";
  r.idempotency_key = idempotency_key;
  return r;
}

Request keyed_request(Command c, const std::string& key, const std::string& request_text) {
  Request r = command_request(std::move(c), key);
  r.fingerprint = request_fingerprint("anonymous", "POST", "/test", request_text);
  return r;
}

Reply run(Engine& e, Command c) { return e.execute(command_request(std::move(c))); }

std::string lease_token(const std::string& seed) {
  return sha256_hex(seed).substr(0, jobs::kLeaseTokenChars);
}

jobs::Enqueue enqueue_command(const std::string& id, const std::string& kind,
                              const std::string& target) {
  jobs::Enqueue c;
  c.id = id;
  c.kind = kind;
  c.target = target;
  c.input = R"({"window":"2026-05-06T00:00Z/PT1H"})";
  return c;
}

namespace {

// Runs one command, reports it, and says what was wrong with the reply.
std::string step(Engine& e, Command c, const ReplyObserver& observe) {
  auto start = std::chrono::steady_clock::now();
  Reply r = run(e, std::move(c));
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (observe) observe(r, ms);
  if (r.status < 200 || r.status >= 300) return std::to_string(r.status) + " " + r.body;
  return "";
}

}  // namespace

std::string run_w1_job(Engine& e, const std::string& id, const std::string& kind,
                       const std::string& target, const ReplyObserver& observe) {
  jobs::Enqueue enq = enqueue_command(id, kind, target);
  std::vector<std::string> plan = enq.plan;
  if (auto err = step(e, enq, observe); !err.empty()) return "enqueue: " + err;
  std::string token = lease_token(id);
  jobs::Claim claim{"worker-" + id, {kind}, 60, token};
  auto start = std::chrono::steady_clock::now();
  Reply claimed = run(e, claim);
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (observe) observe(claimed, ms);
  if (claimed_job(claimed) != id) {
    return "claim of " + id + ": " + std::to_string(claimed.status) + " " + claimed.body;
  }
  if (auto err = step(e, jobs::Start{id, token, "handle-" + id}, observe); !err.empty()) {
    return "start: " + err;
  }
  for (const auto& name : plan) {
    if (auto err = step(e, jobs::StepStart{id, name, token}, observe); !err.empty()) {
      return "step start " + name + ": " + err;
    }
    if (auto err = step(e, jobs::StepDone{id, name, token, R"({"rows":1})"}, observe);
        !err.empty()) {
      return "step done " + name + ": " + err;
    }
  }
  return "";
}

nlohmann::json engine_digest(Engine& e) {
  return inspect(e, [](const State& s) { return state_digest(s); });
}

State loaded_state(const EventStore& store, bool use_snapshot, bool evict_finished) {
  State s;
  LoadReport report;
  LoadOptions lo;
  lo.use_snapshot = use_snapshot;
  lo.evict_finished = evict_finished;
  Status st = load_state(store, lo, &s, &report);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return s;
}

nlohmann::json loaded_digest(const EventStore& store, bool use_snapshot, bool evict_finished) {
  return state_digest(loaded_state(store, use_snapshot, evict_finished));
}

}  // namespace runledger::testing

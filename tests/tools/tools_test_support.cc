// Scaffolding for the CLI tests: see tools_test_support.h.
#include "tests/tools/tools_test_support.h"

#include <sstream>
#include <stdexcept>

#include <gtest/gtest.h>

#include "events/event_codec.h"
#include "events/keys.h"
#include "http/rejection_status.h"

namespace runledger::testing {

namespace {

Reply render(const State&, const Decision* d) {
  if (d != nullptr && d->rejection) {
    const Rejection& r = *d->rejection;
    return Reply::error(http::http_status(r.code), std::string(code_name(r.code)), r.message,
                        r.extra);
  }
  return Reply::json(200, d == nullptr ? nlohmann::json() : d->body);
}

}  // namespace

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// ---- EngineRig ----

EngineRig::EngineRig(uint64_t snapshot_every_events) {
  std::unique_ptr<EventStore> raw;
  Status s = open_rocksdb_store(dir_.path(), StoreOptions{}, &raw);
  if (!s.ok()) throw std::runtime_error("store: " + s.ToString());
  store_ = std::move(raw);
  EngineOptions o;
  o.timers = false;
  o.snapshot_every_events = snapshot_every_events;
  o.snapshot_events_per_live_entity = 0;
  s = Engine::open(store_, clock_, o, &engine_);
  if (!s.ok()) throw std::runtime_error("engine: " + s.ToString());
}

EngineRig::~EngineRig() { close(); }

Reply EngineRig::run(Command c, const std::string& actor) {
  clock_.advance_ms(kStepMs);
  Request r;
  r.command = std::move(c);
  r.actor = actor;
  r.render = render;
  return engine_->execute(std::move(r));
}

void EngineRig::tick() { engine_->tick(); }

std::map<std::string, nlohmann::json> EngineRig::live_views() {
  std::map<std::string, nlohmann::json> out;
  engine_->read([&](const State& s, const Decision*) {
    for (const auto& [id, j] : s.jobs.by_id) out["job/" + id] = jobs::view(s, j);
    for (const auto& [id, c] : s.connectors.by_id) out["connector/" + id] = connectors::view(c);
    for (const auto& [id, h] : s.holds.by_id) out["hold/" + id] = holds::view(h);
    out["seq"] = s.last_seq;
    return Reply{200, ""};
  });
  return out;
}

uint64_t EngineRig::last_seq() { return live_views().at("seq").get<uint64_t>(); }

std::string EngineRig::open_hold_of(const std::string& job) {
  std::string id;
  engine_->read([&](const State& s, const Decision*) {
    for (const auto& [hid, h] : s.holds.by_id) {
      if (h.job == job && !h.released && id.empty()) id = hid;
    }
    return Reply{200, ""};
  });
  return id;
}

void EngineRig::close() {
  if (engine_) engine_->shutdown();
  engine_.reset();
  store_.reset();
}

// ---- workload ----

jobs::Enqueue enqueue(const std::string& id, const std::string& target, int max_attempts) {
  jobs::Enqueue e;
  e.id = id;
  e.kind = "kind-" + id;
  e.target = target;
  e.input = R"({"day":"2026-05-06"})";
  e.plan = {"A", "B"};
  e.reuse_on_rerun = {"A"};
  e.max_attempts = max_attempts;
  return e;
}

jobs::Claim claim(const std::string& job_id, const std::string& worker, const std::string& token,
                  int64_t lease_s) {
  jobs::Claim c;
  c.worker = worker;
  c.kinds = {"kind-" + job_id};
  c.lease_s = lease_s;
  c.lease_token = token;
  return c;
}

namespace {

void expect_ok(EngineRig& rig, Command c, const std::string& what) {
  Reply r = rig.run(std::move(c));
  EXPECT_EQ(r.status, 200) << what << ": " << r.body;
}

// Claim, start and both steps of one job, which then SUCCEEDED.
void run_to_success(EngineRig& rig, const std::string& id, const std::string& worker) {
  const std::string token = "token-" + id;
  Reply claimed = rig.run(claim(id, worker, token));
  EXPECT_EQ(claimed.status, 200) << claimed.body;
  EXPECT_NE(claimed.body.find(id), std::string::npos) << "claim handed out " << claimed.body;
  expect_ok(rig, jobs::Start{id, token, "exec-" + id}, "start " + id);
  for (const char* step : {"A", "B"}) {
    expect_ok(rig, jobs::StepStart{id, step, token}, "step start");
    expect_ok(rig, jobs::StepDone{id, step, token, R"({"rows":42})"}, "step done");
  }
}

void connector_workload(EngineRig& rig) {
  using namespace connectors;
  expect_ok(rig, Create{"c1", "alpha", 0}, "create c1");
  expect_ok(rig, StartSync{"c1", "s1"}, "sync c1");
  ReportProgress progress{"c1", "s1", {}};
  progress.documents.pending = {"d1", "d2", "d3"};
  expect_ok(rig, progress, "progress c1");
  ReportSucceeded done{"c1", "s1", {}};
  done.documents.indexed = {"d1", "d2"};
  done.documents.failed = {{"d3", "boom"}};
  expect_ok(rig, done, "succeeded c1");

  expect_ok(rig, Create{"c2", "beta", 60}, "create c2");
  expect_ok(rig, StartSync{"c2", "s2"}, "sync c2");
  expect_ok(rig, ReportFailed{"c2", "s2", "disk full"}, "failed c2");
  Update pause;
  pause.id = "c2";
  pause.status = "paused";
  expect_ok(rig, pause, "pause c2");

  expect_ok(rig, Create{"c3", "gamma", 0}, "create c3");
  expect_ok(rig, Delete{"c3"}, "delete c3");

  expect_ok(rig, Create{"c4", "delta", 0}, "create c4");
  expect_ok(rig, StartSync{"c4", "s4"}, "sync c4");
  expect_ok(rig, AbortSync{"c4"}, "abort c4");
  // A late report of the aborted sync is refused and recorded as ignored.
  EXPECT_EQ(rig.run(ReportProgress{"c4", "s4", {}}).status, 409);
}

// j4 runs, its lease runs out while RUNNING: STALE with a hold, which an
// operator releases saying the run FAILED.
void stale_job_workload(EngineRig& rig) {
  expect_ok(rig, enqueue("j4", "t4"), "enqueue j4");
  expect_ok(rig, claim("j4", "w4", "token-j4", 10), "claim j4");
  expect_ok(rig, jobs::Start{"j4", "token-j4", "exec-j4"}, "start j4");
  rig.clock().advance_ms(11'000);
  rig.tick();
  const std::string hold = rig.open_hold_of("j4");
  ASSERT_FALSE(hold.empty()) << "no hold was placed when j4's lease ran out";
  holds::ReleaseHold release{hold, "the run was stopped by hand", true, "FAILED"};
  expect_ok(rig, release, "release the hold of j4");
}

void job_workload(EngineRig& rig) {
  expect_ok(rig, enqueue("j1", "t1"), "enqueue j1");
  run_to_success(rig, "j1", "w1");

  expect_ok(rig, enqueue("j2", "t2", 2), "enqueue j2");
  expect_ok(rig, claim("j2", "w2", "token-j2"), "claim j2");
  expect_ok(rig, jobs::Start{"j2", "token-j2", ""}, "start j2");
  expect_ok(rig, jobs::StepStart{"j2", "A", "token-j2"}, "step j2");
  expect_ok(rig, jobs::StepFail{"j2", "A", "token-j2", "source timed out", true}, "fail j2");

  expect_ok(rig, enqueue("j3", "t3"), "enqueue j3");
  expect_ok(rig, jobs::Cancel{"j3", "not needed"}, "cancel j3");

  stale_job_workload(rig);

  expect_ok(rig, enqueue("j5", "t5"), "enqueue j5");
  expect_ok(rig, claim("j5", "w5", "token-j5", 3600), "claim j5");
  expect_ok(rig, enqueue("j6", "t5"), "enqueue j6");  // blocked by j5

  expect_ok(rig, jobs::Rerun{"j1", "the source was restated"}, "rerun j1");
}

void hold_workload(EngineRig& rig) {
  expect_ok(rig, holds::Place{"h-op1", "t7", holds::kResultUnknown, "output unclear", ""},
            "place h-op1");
  expect_ok(rig, holds::Place{"h-op2", "t8", holds::kExecutionStateUnknown, "manual run", ""},
            "place h-op2");
  expect_ok(rig, holds::ReleaseHold{"h-op1", "checked the output", std::nullopt, std::nullopt},
            "release h-op1");
  expect_ok(rig, enqueue("j7", "t8"), "enqueue j7");  // blocked by h-op2
}

}  // namespace

void run_mixed_workload(EngineRig& rig) {
  connector_workload(rig);
  job_workload(rig);
  hold_workload(rig);
  // The paused connector's schedule slot came due meanwhile: it is skipped.
  rig.tick();
}

// ---- forged events ----

namespace {

struct Unpacked {
  const fb::Event* event = nullptr;
  fb::PayloadUnion payload;
};

Unpacked unpack(std::string_view bytes) {
  Unpacked u;
  Status s = decode_event(bytes, &u.event);
  if (!s.ok()) throw std::runtime_error("forging from bytes that do not decode");
  u.payload.type = u.event->payload_type();
  u.payload.value = fb::PayloadUnion::UnPack(u.event->payload(), u.event->payload_type(), nullptr);
  return u;
}

}  // namespace

std::string with_prev_hash(std::string_view bytes, const Hash& prev_hash) {
  Unpacked u = unpack(bytes);
  EventDraft d;
  d.seq = u.event->seq();
  d.stream = u.event->stream()->string_view();
  d.stream_version = u.event->stream_version();
  d.recorded_at_ms = u.event->recorded_at_ms();
  d.actor = u.event->actor() ? u.event->actor()->string_view() : "";
  d.command_id = u.event->command_id() ? u.event->command_id()->string_view() : "";
  d.prev_hash = prev_hash;
  d.payload = &u.payload;
  std::string out;
  encode_event(d, &out);
  return out;
}

std::string with_unknown_payload_type(std::string_view bytes) {
  Unpacked u = unpack(bytes);
  flatbuffers::FlatBufferBuilder fbb;
  auto stream = fbb.CreateString(u.event->stream()->str());
  auto prev = fbb.CreateVector(u.event->prev_hash()->data(), u.event->prev_hash()->size());
  auto payload = u.payload.Pack(fbb);
  fb::EventBuilder b(fbb);
  b.add_seq(u.event->seq());
  b.add_stream(stream);
  b.add_stream_version(u.event->stream_version());
  b.add_recorded_at_ms(u.event->recorded_at_ms());
  b.add_prev_hash(prev);
  constexpr uint8_t kNoSuchType = 200;
  b.add_payload_type(static_cast<fb::Payload>(kNoSuchType));
  b.add_payload(payload);
  fb::FinishEventBuffer(fbb, b.Finish());
  return std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
}

}  // namespace runledger::testing
